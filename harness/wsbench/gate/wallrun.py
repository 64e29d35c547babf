"""The wall-clock gate's measurement: one interleaved ``wsbench run`` of our clients and
the reference client against the native server (``wall.Spec``), saved as an ordinary run
file under ``reports/`` (so ``wsbench report`` and ``wsbench compare`` read it too).

With ``--base REF`` the same run also has the base build's clients (``variant``:
``quickjs@base``, ``loadgen@base``, their command lines pointing into
``build/base/<sha>/``), interleaved with the head's in every round."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..catalog import Catalog, Program
from ..errors import WsbenchError
from ..paths import report_files
from ..progress import Progress
from ..model import Run, Settings, write_json
from ..runner import Plan, execute, new_run
from ..workloads import WorkloadSet
from .builds import Build
from .wall import Spec

# The parts of a catalog command line that come from the project's own tree (a side's).
TREE_PATHS = ("clients/", "servers/", "build/bin/", "build/quickjs-websocket/", "build/clients/")


def variant(program: Program, build: Build) -> Program:
    """``program`` as ``build`` has it: ``NAME@side``, every path into the project's tree
    (the adapter, its module, a native binary) taken from the side's tree; the runtime
    (qjs, node) is shared."""
    def moved(path: str) -> str:
        return build.path(path) if path.startswith(TREE_PATHS) else path

    if not any(p.startswith(TREE_PATHS) for p in program.command):
        raise WsbenchError(f"{program.kind} '{program.name}' runs nothing of this project's tree: it has no "
                           f"{build.side} build")
    return replace(program, name=f"{program.name}@{build.side}", label=f"{program.label} ({build.label})",
                   command=tuple(moved(p) for p in program.command),
                   requires=tuple(moved(p) for p in program.requires), default=False)


def measure(spec: Spec, catalog: Catalog, workloads: WorkloadSet, out_dir: Path, argv: list[str],
            note: Progress, only: list[str] | None = None, builds: tuple[Build, ...] = ()) -> tuple[Run, Path]:
    """Run the spec (or only the workloads named in ``only``); the run and its file.
    ``builds``: the sides whose clients run beside each other (``--base``: the base's and
    the head's), the head's server for all; none: the working tree's, as in the catalog."""
    names = [w for w in spec.workloads if not only or w in only]
    _, chosen = workloads.select(None, names)
    servers = catalog.select("server", [spec.server], None)
    ours = catalog.select("client", list(spec.clients), None)
    reference = catalog.select("client", [spec.reference], None)
    head = next((b for b in builds if b.side == "head"), None)
    if head is not None and head.tree != ".":
        servers = [variant(s, head) for s in servers]
    clients = [variant(c, b) if b.tree != "." else c for b in builds for c in ours] if builds else ours
    clients = [*clients, *reference]
    missing = [p for p in servers + clients if p.missing()]
    if missing:
        raise WsbenchError(f"{missing[0].kind} '{missing[0].name}': {missing[0].missing()[0]} is missing; "
                           "run: make setup")
    plan = Plan(servers, clients, chosen, spec.repetitions, None, Settings(min_seconds=spec.min_seconds))
    files = report_files(out_dir, "gate-wall")
    path = files.json
    run = new_run(plan, catalog, argv)
    note.note(f"gate: wall-clock run: {', '.join(names)} x {', '.join(c.name for c in clients)} against "
              f"{servers[0].name}, {spec.repetitions} repetitions")
    execute(plan, run, out_dir / "logs" / f"gate-{files.stamp}", path, note)
    run.complete = True
    write_json(run, path)
    return run, path

