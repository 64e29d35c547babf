"""``wsbench compare A.json B.json``: what changed from run A to run B, cell by cell.

For every cell both runs measured, the workload's ranking metric (and the p99 latency of
latency and open-loop workloads) is compared over the repetitions with a two-sided
Mann-Whitney U test. A cell counts as changed only when p < 0.01 **and** the medians
differ by more than the minimum effect: 20 % for p99 latency, 10 % for everything else
(throughput). With few repetitions the test cannot reach p < 0.01 at all (3 against 3:
the smallest possible p is 0.1); such cells are listed as untestable, never as unchanged.

Before testing, the drift every cell shares is divided out (``remove_drift``; ``--raw``
keeps the values as measured), per metric, where at least ``MIN_CELLS`` cells share it:

1. within each run, per repetition round: the machine's pace in that round is the median
   over cells of (value in the round / the cell's median over the rounds) — repetitions
   are interleaved, so every cell runs in every round;
2. between the runs: the median over cells of (B's median / A's median), once the rounds'
   drift is out, is what the whole of run B shares against run A (a slower machine that
   day, another load); B is divided by it. Cells a first pass finds changed are left out
   of that median in a second pass, so that a change of many cells (every cell of one
   client: a quarter of the quick suite) is not partly taken for drift.

A change of the code under test moves the cells that run it (the QuickJS client's, say),
a minority: the medians over all cells stay with the majority, which did not change, so it
stays visible, and the spread the machine adds to every cell no longer hides it. A change
that moved most cells alike would be taken for drift: the shared shift is printed, and
any beyond the minimum effect is called out.

Exit codes (``EXIT_*``): 1 at least one cell got worse; else 4 "cannot decide": at least
one cell could not be tested (too few repetitions on either side), so nothing can be said
of it, whatever the others did; else 3 only improvements; else 0 nothing changed; 2 bad
input (the command line's usual code). An untestable cell is never counted as unchanged.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .doc import Bullets, Grid, Section
from .errors import WsbenchError
from .metrics import METRICS
from .ranking import label, values, workload_metric
from .model import Run

ALPHA = 0.01
MIN_CELLS = 8  # cells sharing a metric before drift is estimated from them
MIN_EFFECT = {"latency_p99_us": 0.20}
DEFAULT_MIN_EFFECT = 0.10
P99 = "latency_p99_us"
P99_KINDS = ("latency", "openloop")

EXIT_SAME = 0
EXIT_WORSE = 1
EXIT_BETTER = 3
EXIT_CANNOT_DECIDE = 4
VERDICTS = {EXIT_SAME: "nothing changed", EXIT_WORSE: "worse", EXIT_BETTER: "better only",
            EXIT_CANNOT_DECIDE: "cannot decide"}


@dataclass(frozen=True)
class Change:
    workload: str
    server: str
    client: str
    metric: str
    n: tuple[int, int]
    median: tuple[float, float]
    p: float | None  # None when the test cannot be run (a side without values)
    min_p: float  # the smallest p these sample sizes can give
    verdict: str  # "worse", "better", "same", "untestable"
    adjusted: tuple[float, float] | None = None  # the medians tested, drift removed (None: as measured)

    @property
    def change(self) -> float:
        """B over A, as tested (with the drift removed, unless ``--raw``)."""
        a, b = self.adjusted or self.median
        return (b - a) / a if a else math.inf


def smallest_p(n1: int, n2: int) -> float:
    """The smallest two-sided p the exact Mann-Whitney U test can give for these sizes
    (every value of one side above every value of the other): 2 / C(n1 + n2, n1)."""
    if n1 < 1 or n2 < 1:
        return 1.0
    return min(1.0, 2 / math.comb(n1 + n2, n1))


def compare_cell(a: list[float], b: list[float], metric: str,
                 min_effect: float | None = None) -> tuple[float | None, float, str]:
    """(p, smallest possible p, verdict) for the values of one cell in run A and run B;
    ``min_effect`` replaces the metric's default minimum effect (``wsbench gate`` passes
    its calibrated thresholds)."""
    floor = smallest_p(len(a), len(b))
    if floor >= ALPHA:
        return None, floor, "untestable"
    if min(a + b) == max(a + b):
        return 1.0, floor, "same"
    from scipy.stats import mannwhitneyu  # scipy only when a test is run (it is slow to import)

    p = float(mannwhitneyu(a, b, alternative="two-sided").pvalue)
    ma, mb = statistics.median(a), statistics.median(b)
    effect = abs(mb - ma) / ma if ma else math.inf
    if min_effect is None:
        min_effect = MIN_EFFECT.get(metric, DEFAULT_MIN_EFFECT)
    if p >= ALPHA or effect <= min_effect:
        return p, floor, "same"
    higher = METRICS[metric].higher_is_better
    return p, floor, "better" if (mb > ma) == higher else "worse"


Readings = dict[tuple[str, str], dict[int, float]]  # (cell key, metric) -> value per repetition round


def readings(run: Run) -> Readings:
    """The values ``compare`` looks at, per cell and metric, by repetition round: the
    workload's ranking metric, and p99 latency for latency and open-loop workloads
    (ValueError or TypeError for a run file whose values are not numbers)."""
    out: Readings = {}
    for cell in run.cells:
        metrics = [workload_metric(run, cell.workload)]
        if run.workloads[cell.workload].get("kind") in P99_KINDS and P99 not in metrics:
            metrics.append(P99)
        for metric in metrics:
            get = METRICS[metric].get
            vs = {s.rep: float(v) for s in cell.ok_samples if (v := get(s)) is not None}
            if vs:
                out[(cell.key, metric)] = vs
    return out


@dataclass(frozen=True)
class Drift:
    """What ``remove_drift`` divided out, per metric: each run's factor per repetition round
    (its pace in that round over its median pace), and B's shift against A shared by all
    cells (B over A); ``cells``: how many cells the estimates came from."""

    rounds: dict[str, tuple[list[float], list[float]]]
    shift: dict[str, float]
    cells: dict[str, int]


def remove_drift(ra: Readings, rb: Readings, changed: frozenset[tuple[str, str]] = frozenset()
                 ) -> tuple[Readings, Readings, Drift]:
    """Both runs with the drift every cell shares divided out (module docstring), per metric
    that at least MIN_CELLS cells of both runs share; other metrics stay as measured. The
    estimates are medians of logarithms, so one cell cannot move them far; ``changed``: cells
    a first pass found changed, left out of the shift between the runs."""
    metrics = sorted({m for _, m in ra} & {m for _, m in rb})
    out_a, out_b = dict(ra), dict(rb)
    drift = Drift({}, {}, {})
    for metric in metrics:
        common = [k for k in ra if k[1] == metric and k in rb]
        if len(common) < MIN_CELLS:
            continue
        fa, fb = _round_factors({k: ra[k] for k in common}), _round_factors({k: rb[k] for k in common})
        for k in common:
            out_a[k] = {r: v / fa.get(r, 1.0) for r, v in ra[k].items()}
            out_b[k] = {r: v / fb.get(r, 1.0) for r, v in rb[k].items()}
        logs = [math.log(statistics.median(out_b[k].values()) / statistics.median(out_a[k].values()))
                for k in common if _positive(out_a[k]) and _positive(out_b[k]) and k not in changed]
        shift = math.exp(statistics.median(logs)) if logs else 1.0
        for k in common:
            out_b[k] = {r: v / shift for r, v in out_b[k].items()}
        drift.rounds[metric] = ([fa[r] for r in sorted(fa)], [fb[r] for r in sorted(fb)])
        drift.shift[metric] = shift
        drift.cells[metric] = len(common)
    return out_a, out_b, drift


def _round_factors(cells: Readings) -> dict[int, float]:
    """Per repetition round, the median over cells of the value over the cell's median
    (in logs); rounds only some cells have still get one (from those)."""
    per_round: dict[int, list[float]] = {}
    for vs in cells.values():
        if len(vs) < 2 or not _positive(vs):
            continue
        mid = statistics.median(math.log(v) for v in vs.values())
        for r, v in vs.items():
            per_round.setdefault(r, []).append(math.log(v) - mid)
    return {r: math.exp(statistics.median(ds)) for r, ds in per_round.items()}


def _positive(vs: dict[int, float]) -> bool:
    return all(v > 0 for v in vs.values())


def compare(a: Run, ra: Readings, rb: Readings, raw: bool = False) -> list[Change]:
    """Every (cell, metric) both runs measured, drift removed first unless ``raw``; names
    and workloads as in run A."""
    return judged(a, ra, rb, raw)[0]


def judged(a: Run, ra: Readings, rb: Readings, raw: bool = False) -> tuple[list[Change], Drift | None]:
    """``compare``, and the drift it removed (None with ``raw``). Two passes: the cells the
    first finds changed do not count toward the shift the second removes, so a change of
    many cells (a client's every cell) does not pass for drift and make the others move."""
    if raw:
        return _tested(a, ra, rb, ra, rb, raw), None
    ta, tb, drift = remove_drift(ra, rb)
    first = _tested(a, ra, rb, ta, tb, raw)
    changed = frozenset((f"{c.workload}/{c.server}/{c.client}", c.metric) for c in first
                        if c.verdict in ("worse", "better"))
    if not changed:
        return first, drift
    ta, tb, drift = remove_drift(ra, rb, changed)
    return _tested(a, ra, rb, ta, tb, raw), drift


def _tested(a: Run, ra: Readings, rb: Readings, ta: Readings, tb: Readings, raw: bool) -> list[Change]:
    cells = {c.key: c for c in a.cells}
    out = []
    for (key, metric), va in ra.items():
        vb = rb.get((key, metric))
        if vb is None:
            continue
        cell = cells[key]
        xa, xb = list(ta[(key, metric)].values()), list(tb[(key, metric)].values())
        p, floor, verdict = compare_cell(xa, xb, metric)
        adjusted = None if raw else (statistics.median(xa), statistics.median(xb))
        out.append(Change(cell.workload, cell.server, cell.client, metric, (len(va), len(vb)),
                          (statistics.median(va.values()), statistics.median(vb.values())), p, floor, verdict,
                          adjusted))
    if not out:
        raise WsbenchError("the two runs have no measured cell in common")
    return out


def exit_code(changes: list[Change]) -> int:
    """Worse wins (a cell that got worse is known); then an untestable cell leaves the
    whole comparison undecided; then improvements; else nothing changed."""
    verdicts = {c.verdict for c in changes}
    if "worse" in verdicts:
        return EXIT_WORSE
    if "untestable" in verdicts:
        return EXIT_CANNOT_DECIDE
    return EXIT_BETTER if "better" in verdicts else EXIT_SAME


ORDER = {"worse": 0, "better": 1, "same": 2, "untestable": 3}


def sections(a: Run, b: Run, names: tuple[str, str], changes: list[Change],
             drift: Drift | None = None) -> list[Section]:
    counts = {v: sum(c.verdict == v for c in changes) for v in ORDER}
    grid = Grid(["workload", "client", "server", "metric", "A median", "B median",
                 "change" if drift is None else "change, drift removed", "n (A, B)", "p", "verdict"],
                right={4, 5, 6, 7, 8})
    for c in sorted(changes, key=lambda c: (ORDER[c.verdict], -abs(c.change))):
        m = METRICS[c.metric]
        worse = c.change * (1 if not m.higher_is_better else -1)
        grid.add([c.workload, label(b, "clients", c.client), label(b, "servers", c.server), m.header,
                  f"{c.median[0]:,.{m.digits}f}", f"{c.median[1]:,.{m.digits}f}", f"{c.change:+.1%}",
                  f"{c.n[0]}, {c.n[1]}", f"≥ {c.min_p:.2g}" if c.p is None else f"{c.p:.3g}",
                  f"**{c.verdict}**" if c.verdict in ("worse", "better") else c.verdict],
                 {6: 1 + max(worse, 0) * 10 if c.verdict != "untestable" else None})
    code = exit_code(changes)
    summary = [f"**Verdict: {VERDICTS[code]}** (exit code {code}): {counts['worse']} worse, {counts['better']} "
               f"better, {counts['same']} unchanged, {counts['untestable']} untestable (cannot decide), of "
               f"{len(changes)} compared (cells in both runs)."]
    untestable = [c for c in changes if c.verdict == "untestable"]
    if untestable:
        sizes = sorted({c.n for c in untestable})
        summary.append(
            "**Untestable cells**: with these repetition counts the Mann-Whitney U test cannot reach "
            f"p < {ALPHA} at all, whatever the data: "
            + "; ".join(f"{n1} against {n2} repetitions: smallest possible p = {smallest_p(n1, n2):.3g} "
                        f"({sum(c.n == (n1, n2) for c in untestable)} cells)" for n1, n2 in sizes)
            + ". Run both sides with more repetitions (5 against 5 or more, `-n 5`) to decide them.")
    facts = Bullets([f"A: `{names[0]}`: {_what(a)}", f"B: `{names[1]}`: {_what(b)}"] + differences(a, b))
    rule = (f"A cell changed when the two-sided Mann-Whitney U test over the repetitions gives p < {ALPHA} and the "
            f"medians differ by more than {MIN_EFFECT[P99]:.0%} (p99 latency) or {DEFAULT_MIN_EFFECT:.0%} "
            "(every other metric); change is B over A"
            + (", as measured (--raw)." if drift is None else ", once the drift every cell shares is divided out "
               "(below)."))
    blocks: list = [facts, rule, *summary]
    if drift is not None:
        blocks += _drift_lines(drift)
    return [Section("Runs", blocks), Section("Cells", [grid])]


def _drift_lines(drift: Drift) -> list[str]:
    if not drift.shift:
        return [f"**Drift**: no metric is shared by {MIN_CELLS} cells or more: the values are tested as measured."]
    out = []
    for metric, shift in drift.shift.items():
        fa, fb = drift.rounds[metric]
        header = METRICS[metric].header
        line = (f"**Drift removed** ({header}, from {drift.cells[metric]} cells): run B against run A, shared by "
                f"all cells: {shift - 1:+.1%}; round factors A: {', '.join(f'{f:.3f}' for f in fa)}; "
                f"B: {', '.join(f'{f:.3f}' for f in fb)}.")
        effect = MIN_EFFECT.get(metric, DEFAULT_MIN_EFFECT)
        if abs(shift - 1) > effect:
            line += (f" That shift is beyond the minimum effect ({effect:.0%}): the machine moved, or a change "
                     "moved most cells alike, which this cannot tell apart — compare with --raw to see the cells "
                     "as measured.")
        out.append(line)
    return out


def differences(a: Run, b: Run) -> list[str]:
    """What differs between the runs besides the code under test, so that a change is not
    blamed on the wrong thing."""
    out = [f"**settings differ**: {key} is {a.settings.get(key)!r} in A, {b.settings.get(key)!r} in B"
           for key in sorted(set(a.settings) | set(b.settings)) if a.settings.get(key) != b.settings.get(key)]
    for key in ("cpu_model", "logical_cpus", "kernel"):
        if a.environment.get(key) != b.environment.get(key):
            out.append(f"**machines differ**: {key} {a.environment.get(key)!r} in A, {b.environment.get(key)!r} in B")
    versions = [f"{rt}: {a.environment.get('runtimes', {}).get(rt, {}).get('version')} → {v.get('version')}"
                for rt, v in b.environment.get("runtimes", {}).items()
                if a.environment.get("runtimes", {}).get(rt, {}).get("version") != v.get("version")]
    if versions:
        out.append("**runtime versions differ**: " + "; ".join(versions))
    return out


def _what(run: Run) -> str:
    env = run.environment
    dirty = " (dirty)" if env.get("git_dirty") else ""
    return (f"{run.created}, suite {run.suite or '(ad hoc)'}, {run.repetitions} repetitions, commit "
            f"{str(env.get('git_commit'))[:12]}{dirty}, {env.get('cpu_model')} × {env.get('logical_cpus')}")
