"""One ``wsbench gate`` invocation: which gates, measure, judge or update, write the
report (``reports/gate-<time>.json`` and ``.md``) or the baseline, and the exit code.

Two ways to get the figures to beat: the committed baseline file (``baselines/gate.json``,
for local use on the machine that took it), or ``--base REF`` (``_pair``): the base
commit built in ``build/base/<sha>/`` (gate/builds.py) and counted and measured beside the
head in the same job, so the machine is the same by construction (CI)."""

from __future__ import annotations

import shutil
import sys
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from .. import environment
from ..catalog import Catalog
from ..errors import WsbenchError
from ..paths import ROOT, relative, report_files, time_stamp
from ..progress import Progress
from ..report import render
from ..model import DeterministicBaseline, Finding, GateReport, Run, WallBaseline, read_json, write_json
from ..newrun import carrying
from ..workloads import WorkloadSet
from . import arches, baseline as baselines, builds, deterministic, findings, machine, wall, wallrun
from .arches import Arch
from .builds import Build, HeadDoesNotBuild
from .cells import PROFILES, UNGATED, select
from .verdict import EXIT_CANNOT_RUN, Outcome, combined_exit, summary_lines

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
    base: str | None = None  # --base REF: gate against that commit's build instead of the baseline file
    head: str | None = None  # --head REF (with --base): another commit as the head, built the same way
    summary: Path | None = None  # append the verdict as Markdown (CI: $GITHUB_STEP_SUMMARY)
    wall_workloads: list[str] | None = None  # replace the wall spec's workloads
    wall_repetitions: int | None = None  # replace the wall spec's repetitions
    arch: str = arches.DEFAULT  # --arch: whose cells are counted, and how (gate/arches.py)


def _arch(opts: Options) -> Arch:
    """The architecture asked for, refused in one line where it cannot run: a gate it has
    not, ``--base``, or its build missing (naming the make target that builds it)."""
    arch = arches.get(opts.arch)
    if opts.only and opts.only not in arch.gates:
        raise WsbenchError(f"--arch {arch.name} has no {opts.only} gate (only {', '.join(arch.gates)}: "
                           "QEMU's wall-clock times say nothing of ARM hardware)")
    if (opts.base or opts.head) and not arch.pairs:
        raise WsbenchError(f"--arch {arch.name} counts the working tree's build only (no --base: base trees are "
                           "not cross-built)")
    if arch.name != arches.DEFAULT:
        missing = arch.missing()
        if missing:
            raise WsbenchError(f"--arch {arch.name}: {missing}")
    return arch


def run(opts: Options, catalog: Catalog, workloads: WorkloadSet, argv: list[str]) -> int:
    arch = _arch(opts)
    if opts.base or opts.head:
        return _pair(opts, catalog, workloads, argv)
    if opts.calibrate and (opts.calibrate < 2 or not opts.update):
        raise WsbenchError("--calibrate N needs --update and N of at least 2")
    if opts.wall_run and opts.only == "deterministic":
        raise WsbenchError("--wall-run is for the wall gate (not with --only deterministic)")
    progress = Progress(total=0, quiet=opts.quiet)
    previous = baselines.load(opts.baseline)
    gates = [opts.only] if opts.only else list(arch.gates)
    stamp = time_stamp()
    here = arch.fingerprint()
    outcomes: list[Outcome] = []
    det_section: DeterministicBaseline | None = None
    wall_section: WallBaseline | None = None
    wall_run: Run | None = None
    if "deterministic" in gates:
        outcome, det_section = _deterministic(opts, arch, previous, workloads, here, progress, stamp)
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
            for line in summary_lines(outcomes):
                print(line)
            return EXIT_CANNOT_RUN
        new = baselines.updated(previous, argv, env, det_section, wall_section, wall_run, arch.name)
        baselines.save(new, opts.baseline)
        print(f"wsbench gate: wrote {relative(opts.baseline)} ("
              + ", ".join(g for g, s in (("deterministic counts", det_section), ("wall-clock ratios", wall_section))
                          if s is not None) + ")")
        for line in summary_lines(outcomes):
            print(line)
        return combined_exit(outcomes) if outcomes else 0
    code = combined_exit(outcomes)
    report = carrying(wall_run, argv, env, {},
                      gate=GateReport(relative(opts.baseline), "quick" if opts.quick else "full", outcomes, code))
    return _write(opts, report, outcomes, stamp, None, "baseline")


def _deterministic(opts: Options, arch: Arch, previous: Run | None, workloads: WorkloadSet, here: dict[str, Any],
                   progress: Progress, stamp: str) -> tuple[Outcome | None, DeterministicBaseline | None]:
    base = baselines.deterministic(previous, arch.name)
    missing = arch.missing()
    if missing:
        return Outcome("deterministic", [], missing), None
    other = arch.name != arches.DEFAULT
    if not opts.update:
        if base is None:
            return Outcome("deterministic", [], f"{relative(opts.baseline)} has no deterministic counts"
                                                f"{' for ' + arch.name if other else ''} (run: wsbench gate"
                                                f"{' --arch ' + arch.name if other else ''} --update)"), None
        why = machine.mismatch(base.machine, here, arch.keys)
        if why:
            return Outcome("deterministic", [], "the baseline's counts were taken on another machine and do "
                                                f"not compare: {why}"), None
    cells = select(opts.cells, arch.cells)
    profiles = ["quick"] if opts.quick else (list(PROFILES) if opts.update else ["full"])
    work = opts.out / "gate" / stamp
    section = base
    outcome = None
    for profile in profiles:
        counts = deterministic.measure(cells, workloads, profile, work / profile, progress.note, arch.counter)
        if opts.update:
            section = deterministic.section(counts, profile, section, here, arch.keys)
        else:
            outcome = deterministic.judge(counts, base, profile, here, UNGATED, arch.keys)
    return outcome, section if opts.update else None


def _wall(opts: Options, previous: Run | None, catalog: Catalog, workloads: WorkloadSet, progress: Progress,
          argv: list[str]) -> tuple[Outcome | None, WallBaseline | None, Run | None]:
    base = baselines.wall(previous)
    spec = _spec(opts, wall.Spec.from_json(base.spec) if base and not opts.update else wall.Spec())
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


def _spec(opts: Options, spec: wall.Spec) -> wall.Spec:
    """The wall spec with --wall-workload and --wall-repetitions applied."""
    if opts.wall_repetitions is not None and opts.wall_repetitions < 1:
        raise WsbenchError(f"--wall-repetitions must be at least 1, got {opts.wall_repetitions}")
    return replace(spec, workloads=tuple(opts.wall_workloads or spec.workloads),
                   repetitions=opts.wall_repetitions or spec.repetitions)


def _pair(opts: Options, catalog: Catalog, workloads: WorkloadSet, argv: list[str]) -> int:
    """``--base REF``: build the base (and bring the head up to date), count every cell for
    both, run the wall gate with both builds interleaved, judge the head against the base
    with the baseline's thresholds. The base not existing or not building: exit 2; the
    head not building: exit 1."""
    if not opts.base:
        raise WsbenchError("--head REF goes with --base REF (the head is the working tree otherwise)")
    for flag, given in (("--update", opts.update), ("--calibrate", opts.calibrate), ("--wall-run", opts.wall_run)):
        if given:
            raise WsbenchError(f"{flag} is for the baseline file, not for --base")
    progress = Progress(total=0, quiet=opts.quiet)
    gates = [opts.only] if opts.only else list(GATES)
    stamp = time_stamp()
    here = machine.fingerprint()
    if "deterministic" in gates and shutil.which("valgrind") is None:
        raise WsbenchError("valgrind is not installed (run: make setup)")
    base: Build | None = None
    head: Build | None = None
    outcomes: list[Outcome] = []
    wall_run: Run | None = None
    spec, thresholds = _spec(opts, wall.Spec()), _thresholds(opts.baseline)
    try:
        base = builds.prepare(opts.base, "base", progress.note)
        progress.note(f"gate: base {base.commit[:12] if base.commit else ''} ({opts.base}): "
                      + (f"cached in {base.tree}, checked in {base.build_s:.1f} s" if base.cached
                         else f"built in {base.build_s:.1f} s (cold)"))
        head = builds.prepare(opts.head, "head", progress.note) if opts.head else builds.build_head(progress.note)
        progress.note(f"gate: {head.label}: up to date in {head.build_s:.1f} s")
    except HeadDoesNotBuild as exc:
        outcomes.append(Outcome("build", [Finding("build", "head", "native build", 0.0, 0.0, "failed", str(exc))]))
    except WsbenchError as exc:
        outcomes.append(Outcome("build", [], str(exc)))
    if base is not None and head is not None:
        if "deterministic" in gates:
            cells = select(opts.cells)
            profile = "quick" if opts.quick else "full"
            counts = deterministic.measure_pair(cells, workloads, profile, opts.out / "gate" / stamp / profile,
                                                base, head, progress.note)
            outcomes.append(deterministic.judge_pair(*counts, profile, UNGATED))
        if "wall" in gates:
            outcome, wall_run = _wall_pair(opts, catalog, workloads, progress, argv, base, head, spec, thresholds)
            outcomes.append(outcome)
    code = combined_exit(outcomes)
    env = environment.collect(catalog.runtimes[r] for r in sorted(catalog.runtimes))
    env["gate_machine"] = here
    env["gate_builds"] = {"base": base.record() if base else {"side": "base", "ref": opts.base},
                          "head": {**(head.record() if head else {"side": "head", "ref": opts.head}),
                                   **({"commit": env.get("git_commit"), "dirty": env.get("git_dirty")}
                                      if not opts.head else {})}}
    against = f"base {base.commit[:12]} ({opts.base})" if base and base.commit else f"base {opts.base}"
    # what the verdicts were judged with, for the history page's threshold bands
    settings = {**(wall_run.settings if wall_run else {}),
                "gate": {"rise": deterministic.RISE, "fall": deterministic.FALL,
                         "min_effect": thresholds.get("min_effect"), "wall_spec": spec.to_json()}}
    report = carrying(wall_run, argv, env, settings,
                      gate=GateReport(against, "quick" if opts.quick else "full", outcomes, code))
    return _write(opts, report, outcomes, stamp, env["gate_builds"], "base")


def _write(opts: Options, report: Run, outcomes: list[Outcome], stamp: str, pair: dict[str, Any] | None,
           against: str) -> int:
    """The report (``reports/gate-<time>.json`` and ``.md``; the Markdown also appended to
    ``--summary FILE``), the verdict on stdout, and the exit code."""
    assert isinstance(report.gate, GateReport)
    code = report.gate.exit_code
    files = report_files(opts.out, "gate", stamp)
    write_json(report, files.json)
    files.md.write_text(render(findings.document(report.gate, pair, relative(files.json), title="wsbench gate"), "md"))
    text = render(findings.document(report.gate, pair, relative(files.json)), "md")
    if opts.summary:
        try:
            with opts.summary.open("a") as f:
                f.write(text + "\n")
        except OSError as exc:
            raise WsbenchError(f"--summary {opts.summary}: cannot write ({exc.strerror})") from None
    for line in summary_lines(outcomes, against):
        print(line)
    print(f"wsbench gate: {findings.VERDICT[code]} (exit {code}); report: {relative(files.json)}")
    return code


def _thresholds(path: Path) -> dict[str, Any]:
    """The wall gate's thresholds (minimum effects): the baseline file's where it has them
    (its calibration on this kind of machine), else the defaults."""
    committed = baselines.wall(baselines.load(path)) if path.exists() else None
    if committed and committed.thresholds:
        return committed.thresholds
    return wall.thresholds_from({"note": "not calibrated: default minimum effects",
                                 "min_effect": dict(wall.DEFAULT_EFFECT)})


def _wall_pair(opts: Options, catalog: Catalog, workloads: WorkloadSet, progress: Progress, argv: list[str],
               base: Build, head: Build, spec: wall.Spec, thresholds: dict[str, Any]) -> tuple[Outcome, Run]:
    """Both builds' clients in one interleaved run, judged with ``thresholds``."""
    sides = (base, head)

    def names(b: Build) -> dict[str, str]:
        out = {c: f"{c}@{b.side}" for c in spec.clients} if b.tree != "." else {}
        if head.tree != ".":
            out[spec.server] = f"{spec.server}@head"
        return out

    def measure(only: list[str] | None = None) -> tuple[Run, tuple[wall.Ratios, wall.Ratios]]:
        r, path = wallrun.measure(spec, catalog, workloads, opts.out, argv, progress, only, sides)
        print(f"wsbench gate: wall-clock run: {relative(path)}", file=sys.stderr)
        return r, (wall.ratios(r, spec, names(base)), wall.ratios(r, spec, names(head)))

    first_run, first = measure()
    return wall.gate_pair(first, thresholds, lambda only: measure(only)[1]), first_run
