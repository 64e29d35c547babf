"""The one results model: a ``Run`` of ``Cell``s of ``Sample``s, its programs and settings
(run.py), its side sections, one file each (conformance.py, server_conformance.py, deflate_conformance.py, profiles.py,
startup.py, gate.py, counts.py, arch_footprint.py), a program's conformance summary (program_checks.py), the schema's version
and history (schema.py), and the run file, written and read back of any readable version
(runfile.py). Every command loads a results file through
``read_json``.

Layering: the model imports nothing of the harness but ``metrics``, ``stats`` and
``errors``; everything else reads and writes results through it.
"""

from .conformance import VERDICT_MARKS, CaseRecord, Conformance, Verdict
from .counts import ArchCounts, InstructionCounts
from .deflate_conformance import DeflateConformance
from .arch_footprint import ArchFootprint, FileSize, Footprint, MappedFile
from .gate import (EXIT_CANNOT_RUN, EXIT_PASS, EXIT_REGRESSION, FAILING, CellCount, DeterministicBaseline, Finding,
                   Gate, GateBaseline, GateReport, Outcome, WallBaseline, gate_from_json)
from .profiles import PASSES, OverheadRuns, PassResult, ProfileCell, Profiles, SideBreakdown, TopFrame
from .program_checks import CheckResult, ConformanceSummary
from .run import Cell, ProgramRecord, Run, Sample, Settings, now
from .runfile import read_json, write_json
from .schema import HISTORY, READABLE_VERSIONS, SCHEMA, SCHEMA_VERSION
from .server_conformance import ServerConformance, ServerVerdict
from .startup import Figures, Startup, StartupTime

__all__ = ["ArchCounts", "ArchFootprint", "FileSize", "Footprint", "MappedFile", "InstructionCounts", "CaseRecord", "Cell", "DeflateConformance", "CellCount", "CheckResult", "ConformanceSummary", "Conformance", "DeterministicBaseline", "EXIT_CANNOT_RUN", "EXIT_PASS",
           "EXIT_REGRESSION", "FAILING", "Figures", "Finding", "Gate", "GateBaseline", "GateReport", "HISTORY",
           "Outcome", "OverheadRuns", "PASSES", "PassResult", "ProfileCell", "Profiles", "ProgramRecord",
           "READABLE_VERSIONS", "VERDICT_MARKS", "Run", "SCHEMA", "SCHEMA_VERSION", "Sample", "ServerConformance", "ServerVerdict", "Settings", "SideBreakdown", "Startup",
           "StartupTime", "TopFrame", "Verdict", "WallBaseline", "gate_from_json", "now", "read_json", "write_json"]
