"""The run file (reports/*.json): written atomically, and read back, of any readable
version (schema.py), into the model."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable, TypeVar

from ..errors import WsbenchError
from .conformance import Conformance
from .counts import InstructionCounts
from .arch_footprint import Footprint
from .deflate_conformance import DeflateConformance
from .gate import gate_from_json
from .profiles import Profiles
from .program_checks import ConformanceSummary
from .run import Cell, ProgramRecord, Run, Sample
from .schema import READABLE_VERSIONS, SCHEMA
from .server_conformance import ServerConformance
from .startup import Startup

T = TypeVar("T")


def write_json(run: Run, path: Path, summaries: bool = True) -> None:
    """Write atomically, so an interrupted run never leaves a half-written file."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(run.to_json(summaries), indent=1) + "\n")
    os.replace(tmp, path)


def read_json(path: Path) -> Run:
    """Load a run file written by ``write_json`` (for re-rendering and comparison)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise WsbenchError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise WsbenchError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise WsbenchError(f"{path}: not a wsbench run file")
    if data.get("schema_version") not in READABLE_VERSIONS:
        raise WsbenchError(f"{path}: schema version {data.get('schema_version')} is not supported "
                           f"(this wsbench reads {', '.join(map(str, READABLE_VERSIONS))})")
    try:
        return _run_from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise WsbenchError(f"{path}: malformed run file ({exc})") from None


def _run_from_json(data: dict[str, Any]) -> Run:
    def program(d: dict[str, Any]) -> ProgramRecord:
        summary = d.get("conformance")
        return ProgramRecord(**{**d, "conformance": None if summary is None
                                else ConformanceSummary.from_json(summary)})

    cells = []
    for c in data["cells"]:
        cell = Cell(c["workload"], c["server"], c["client"], blocked=c.get("blocked"), na=c.get("na"))
        cell.samples = [Sample(**s) for s in c["samples"]]
        cells.append(cell)
    return Run(
        created=data["created"], command=data["command"], suite=data["suite"],
        repetitions=data["repetitions"], environment=data["environment"],
        workloads=data["workloads"],
        servers={k: program(v) for k, v in data["servers"].items()},
        clients={k: program(v) for k, v in data["clients"].items()},
        cells=cells, finished=data.get("finished"), complete=data.get("complete", False),
        settings=data.get("settings", {}), conformance=_section(data, "conformance", Conformance.from_json),
        profiles=_section(data, "profiles", Profiles.from_json), startup=_section(data, "startup", Startup.from_json),
        gate=_section(data, "gate", gate_from_json),
        server_conformance=_section(data, "server_conformance", ServerConformance.from_json),
        deflate_conformance=_section(data, "deflate_conformance", DeflateConformance.from_json),
        counts=_section(data, "counts", InstructionCounts.from_json),
        footprint=_section(data, "footprint", Footprint.from_json))


def _section(data: dict[str, Any], name: str, read: Callable[[dict[str, Any]], T]) -> T | None:
    """A side section (absent or null: None; in versions before it existed, always)."""
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"{name} is not an object")
    return read(value)
