"""The wall-clock gate's measurement: one interleaved ``wsbench run`` of our clients and
the reference client against the native server (``wall.Spec``), saved as an ordinary run
file under ``reports/`` (so ``wsbench report`` and ``wsbench compare`` read it too)."""

from __future__ import annotations

from pathlib import Path

from ..catalog import Catalog
from ..errors import WsbenchError
from ..paths import report_files
from ..progress import Progress
from ..results import Run, Settings, write_json
from ..runner import Plan, execute, new_run
from ..workloads import WorkloadSet
from .wall import Spec


def measure(spec: Spec, catalog: Catalog, workloads: WorkloadSet, out_dir: Path, argv: list[str],
            note: Progress, only: list[str] | None = None) -> tuple[Run, Path]:
    """Run the spec (or only the workloads named in ``only``); the run and its file."""
    names = [w for w in spec.workloads if not only or w in only]
    _, chosen = workloads.select(None, names)
    servers = catalog.select("server", [spec.server], None)
    clients = catalog.select("client", [*spec.clients, spec.reference], None)
    missing = [p for p in servers + clients if p.missing()]
    if missing:
        raise WsbenchError(f"{missing[0].kind} '{missing[0].name}': {missing[0].missing()[0]} is missing; "
                           "run: make setup")
    plan = Plan(servers, clients, chosen, spec.repetitions, None, Settings(min_seconds=spec.min_seconds))
    files = report_files(out_dir, "gate-wall")
    path = files.json
    run = new_run(plan, catalog, argv)
    note.note(f"gate: wall-clock run: {', '.join(names)} x {', '.join(c.name for c in clients)} against "
              f"{spec.server}, {spec.repetitions} repetitions")
    execute(plan, run, out_dir / "logs" / f"gate-{files.stamp}", lambda r: write_json(r, path, summaries=False), note)
    run.complete = True
    write_json(run, path)
    return run, path
