"""One ``wsbench gate`` invocation: which gates, measure, judge or update, write the
report (``reports/gate-<time>.json`` and ``.md``) or the baseline, and the exit code."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .. import environment
from ..catalog import Catalog
from ..errors import WsbenchError
from ..paths import ROOT, relative, report_files, time_stamp
from ..progress import Progress
from ..records import DeterministicBaseline, GateReport, WallBaseline
from ..results import Run, read_json, write_json
from ..runs import carrying
from ..workloads import WorkloadSet
from . import baseline as baselines, deterministic, machine, wall, wallrun
from .cells import LOADGEN, LWS_ECHO, PROFILES, QJS, UNGATED, select
from .verdict import EXIT_CANNOT_RUN, Outcome, combined_exit, render

GATES = ("deterministic", "wall")


@dataclass
class Options:
    baseline: Path
    update: bool = False
    only: str | None = None
    quick: bool = False
    cells: list[str] | None = None
    calibrate: int = 0
    wall_run: Path | None = None
    out: Path = ROOT / "reports"
    quiet: bool = False


def run(opts: Options, catalog: Catalog, workloads: WorkloadSet, argv: list[str]) -> int:
    if opts.calibrate and (opts.calibrate < 2 or not opts.update):
        raise WsbenchError("--calibrate N needs --update and N of at least 2")
    if opts.wall_run and opts.only == "deterministic":
        raise WsbenchError("--wall-run is for the wall gate (not with --only deterministic)")
    progress = Progress(total=0, quiet=opts.quiet)
    previous = baselines.load(opts.baseline)
    gates = [opts.only] if opts.only else list(GATES)
    stamp = time_stamp()
    here = machine.fingerprint()
    outcomes: list[Outcome] = []
    det_section: DeterministicBaseline | None = None
    wall_section: WallBaseline | None = None
    wall_run: Run | None = None
    if "deterministic" in gates:
        outcome, det_section = _deterministic(opts, previous, workloads, here, progress, stamp)
        if outcome:
            outcomes.append(outcome)
    if "wall" in gates:
        outcome, wall_section, wall_run = _wall(opts, previous, catalog, workloads, progress, argv)
        if outcome:
            outcomes.append(outcome)
    env = environment.collect(catalog.runtimes[r] for r in sorted(catalog.runtimes))
    env["gate_machine"] = here
    if opts.update:
        if det_section is None and wall_section is None:
            for line in render(outcomes):
                print(line)
            return EXIT_CANNOT_RUN
        new = baselines.updated(previous, argv, env, det_section, wall_section, wall_run)
        baselines.save(new, opts.baseline)
        print(f"wsbench gate: wrote {relative(opts.baseline)} ("
              + ", ".join(g for g, s in (("deterministic counts", det_section), ("wall-clock ratios", wall_section))
                          if s is not None) + ")")
        for line in render(outcomes):
            print(line)
        return combined_exit(outcomes) if outcomes else 0
    code = combined_exit(outcomes)
    report = carrying(wall_run, argv, env, {},
                      gate=GateReport(relative(opts.baseline), "quick" if opts.quick else "full", outcomes, code))
    lines = render(outcomes)
    files = report_files(opts.out, "gate", stamp)
    write_json(report, files.json)
    files.md.write_text("# wsbench gate\n\n" + "".join(f"- {line}\n" for line in lines))
    for line in lines:
        print(line)
    verdict = {0: "pass", 1: "REGRESSION", 2: "could not run"}[code]
    print(f"wsbench gate: {verdict} (exit {code}); report: {relative(files.json)}")
    return code


def _deterministic(opts: Options, previous: Run | None, workloads: WorkloadSet, here: dict[str, Any],
                   progress: Progress, stamp: str) -> tuple[Outcome | None, DeterministicBaseline | None]:
    base = baselines.deterministic(previous)
    missing = _missing_tools()
    if missing:
        return Outcome("deterministic", [], missing), None
    if not opts.update:
        if base is None:
            return Outcome("deterministic", [], f"{relative(opts.baseline)} has no deterministic counts "
                                                "(run: wsbench gate --update)"), None
        why = machine.mismatch(base.machine, here)
        if why:
            return Outcome("deterministic", [], "the baseline's counts were taken on another machine and do "
                                                f"not compare: {why}"), None
    cells = select(opts.cells)
    profiles = ["quick"] if opts.quick else (list(PROFILES) if opts.update else ["full"])
    work = opts.out / "gate" / stamp
    section = base
    outcome = None
    for profile in profiles:
        counts = deterministic.measure(cells, workloads, profile, work / profile, progress.note)
        if opts.update:
            section = deterministic.section(counts, profile, section, here)
        else:
            outcome = deterministic.judge(counts, base, profile, here, UNGATED)
    return outcome, section if opts.update else None


def _missing_tools() -> str | None:
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (run: make setup)"
    for path in (QJS[0], LWS_ECHO[0], LOADGEN[0], "build/clients/wsbench_check.so"):
        if not (ROOT / path).exists():
            return f"{path} is missing (run: make setup)"
    return None


def _wall(opts: Options, previous: Run | None, catalog: Catalog, workloads: WorkloadSet, progress: Progress,
          argv: list[str]) -> tuple[Outcome | None, WallBaseline | None, Run | None]:
    base = baselines.wall(previous)
    spec = wall.Spec.from_json(base.spec) if base and not opts.update else wall.Spec()
    if not opts.update and base is None:
        return Outcome("wall", [], f"{relative(opts.baseline)} has no wall-clock ratios "
                                   "(run: wsbench gate --update)"), None, None

    def measure(only: list[str] | None = None) -> tuple[Run, wall.Ratios]:
        r, path = wallrun.measure(spec, catalog, workloads, opts.out, argv, progress, only)
        print(f"wsbench gate: wall-clock run: {relative(path)}", file=sys.stderr)
        return r, wall.ratios(r, spec)

    if opts.wall_run:
        first_run = read_json(opts.wall_run)
        first = wall.ratios(first_run, spec)
        if not first:
            raise WsbenchError(f"{opts.wall_run}: no ratio to take (it needs the cells of "
                               f"{', '.join(spec.clients)} and {spec.reference} against {spec.server})")
    else:
        first_run, first = measure()
    if opts.update:
        runs = [first]
        for _ in range(max(0, opts.calibrate - 1)):
            runs.append(measure()[1])
        if opts.calibrate:
            thresholds = wall.thresholds_from(wall.calibrate(runs))
        elif base and base.thresholds:
            thresholds = base.thresholds
        else:
            thresholds = wall.thresholds_from({"note": "not calibrated: default minimum effects",
                                               "min_effect": dict(wall.DEFAULT_EFFECT)})
        return None, WallBaseline(spec.to_json(), thresholds, first), first_run
    assert base is not None
    remeasure = None if opts.wall_run else (lambda names: measure(names)[1])
    outcome = wall.gate({k: list(v) for k, v in base.ratios.items()}, base.thresholds, remeasure, first)
    return outcome, None, first_run
