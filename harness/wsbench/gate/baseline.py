"""The baseline: ``baselines/gate.json`` in the repository, a wsbench results file (schema
5 and later) whose ``gate`` section has ``role: baseline``. It changes only through ``wsbench gate
--update``, so a pull request that moves it shows the diff: the deterministic counts per
cell, and the wall-clock ratios with the run they came from (the file's cells).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import WsbenchError
from ..paths import ROOT
from ..model import DeterministicBaseline, GateBaseline, Run, WallBaseline, read_json, write_json
from ..newrun import carrying

DEFAULT_PATH = ROOT / "baselines" / "gate.json"


def load(path: Path) -> Run | None:
    """The baseline at ``path``; None when there is no file yet."""
    if not path.exists():
        return None
    run = read_json(path)
    if not isinstance(run.gate, GateBaseline):
        raise WsbenchError(f"{path}: not a gate baseline (no gate section with role 'baseline')")
    return run


def deterministic(run: Run | None, arch: str = "x86-64") -> DeterministicBaseline | None:
    """The counts of ``arch`` (x86-64's are the section ``deterministic``, another's in ``arches``)."""
    if not run or not isinstance(run.gate, GateBaseline):
        return None
    return run.gate.deterministic if arch == "x86-64" else run.gate.arches.get(arch)


def wall(run: Run | None) -> WallBaseline | None:
    return run.gate.wall if run and isinstance(run.gate, GateBaseline) else None


def updated(previous: Run | None, argv: list[str], environment: dict[str, Any],
            deterministic_section: DeterministicBaseline | None, wall_section: WallBaseline | None,
            wall_run: Run | None, arch: str = "x86-64") -> Run:
    """A new baseline: the sections given replace the previous file's (the deterministic
    one ``arch``'s), the rest is kept (with the previous wall run's cells when the wall
    section is kept)."""
    det = deterministic(previous)
    arches = dict(previous.gate.arches) if previous and isinstance(previous.gate, GateBaseline) else {}
    if deterministic_section is not None:
        if arch == "x86-64":
            det = deterministic_section
        else:
            arches[arch] = deterministic_section
    wal = wall_section if wall_section is not None else wall(previous)
    source = wall_run if wall_section is not None else previous
    return carrying(source, argv, environment, source.settings if source else {},
                    gate=GateBaseline(det, wal, dict(sorted(arches.items()))))


def save(run: Run, path: Path) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        write_json(run, path)
    except OSError as exc:
        raise WsbenchError(f"{path}: cannot write ({exc.strerror})") from None
