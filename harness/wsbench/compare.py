"""``wsbench compare A.json B.json``: what changed from run A to run B, cell by cell.

For every cell both runs measured, the workload's ranking metric (and the p99 latency of
latency and open-loop workloads) is compared over the repetitions with a two-sided
Mann-Whitney U test. A cell counts as changed only when p < 0.01 **and** the medians
differ by more than the minimum effect: 20 % for p99 latency, 10 % for everything else
(throughput). With few repetitions the test cannot reach p < 0.01 at all (3 against 3:
the smallest possible p is 0.1); such cells are listed as untestable, never as unchanged.

Exit codes (``EXIT_*``): 0 nothing changed; 1 at least one cell got worse; 3 only
improvements; 4 no cell could be tested (too few repetitions on either side); 2 bad
input (the command line's usual code).
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass

from .doc import Bullets, Grid, Section
from .errors import WsbenchError
from .metrics import METRICS
from .ranking import label, values, workload_metric
from .results import Run

ALPHA = 0.01
MIN_EFFECT = {"latency_p99_us": 0.20}
DEFAULT_MIN_EFFECT = 0.10
P99 = "latency_p99_us"
P99_KINDS = ("latency", "openloop")

EXIT_SAME = 0
EXIT_WORSE = 1
EXIT_BETTER = 3
EXIT_UNTESTABLE = 4


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

    @property
    def change(self) -> float:
        a, b = self.median
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


Readings = dict[tuple[str, str], list[float]]  # (cell key, metric) -> the repetitions' values


def readings(run: Run) -> Readings:
    """The values ``compare`` looks at, per cell and metric: the workload's ranking metric,
    and p99 latency for latency and open-loop workloads (ValueError or TypeError for a run
    file whose values are not numbers)."""
    out: Readings = {}
    for cell in run.cells:
        metrics = [workload_metric(run, cell.workload)]
        if run.workloads[cell.workload].get("kind") in P99_KINDS and P99 not in metrics:
            metrics.append(P99)
        for metric in metrics:
            vs = [float(v) for v in values(cell, metric)]
            if vs:
                out[(cell.key, metric)] = vs
    return out


def compare(a: Run, ra: Readings, rb: Readings) -> list[Change]:
    """Every (cell, metric) both runs measured; names and workloads as in run A."""
    cells = {c.key: c for c in a.cells}
    out = []
    for (key, metric), va in ra.items():
        vb = rb.get((key, metric))
        if vb is None:
            continue
        cell = cells[key]
        p, floor, verdict = compare_cell(va, vb, metric)
        out.append(Change(cell.workload, cell.server, cell.client, metric, (len(va), len(vb)),
                          (statistics.median(va), statistics.median(vb)), p, floor, verdict))
    if not out:
        raise WsbenchError("the two runs have no measured cell in common")
    return out


def exit_code(changes: list[Change]) -> int:
    verdicts = {c.verdict for c in changes}
    if "worse" in verdicts:
        return EXIT_WORSE
    if "better" in verdicts:
        return EXIT_BETTER
    return EXIT_UNTESTABLE if verdicts == {"untestable"} else EXIT_SAME


ORDER = {"worse": 0, "better": 1, "same": 2, "untestable": 3}


def sections(a: Run, b: Run, names: tuple[str, str], changes: list[Change]) -> list[Section]:
    counts = {v: sum(c.verdict == v for c in changes) for v in ORDER}
    grid = Grid(["workload", "client", "server", "metric", "A median", "B median", "change", "n (A, B)", "p",
                 "verdict"], right={4, 5, 6, 7, 8})
    for c in sorted(changes, key=lambda c: (ORDER[c.verdict], -abs(c.change))):
        m = METRICS[c.metric]
        worse = c.change * (1 if not m.higher_is_better else -1)
        grid.add([c.workload, label(b, "clients", c.client), label(b, "servers", c.server), m.header,
                  f"{c.median[0]:,.{m.digits}f}", f"{c.median[1]:,.{m.digits}f}", f"{c.change:+.1%}",
                  f"{c.n[0]}, {c.n[1]}", f"≥ {c.min_p:.2g}" if c.p is None else f"{c.p:.3g}",
                  f"**{c.verdict}**" if c.verdict in ("worse", "better") else c.verdict],
                 {6: 1 + max(worse, 0) * 10 if c.verdict != "untestable" else None})
    summary = [f"{counts['worse']} worse, {counts['better']} better, {counts['same']} unchanged, "
               f"{counts['untestable']} untestable, of {len(changes)} compared (cells in both runs)."]
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
            "(every other metric); change is B over A.")
    return [Section("Runs", [facts, rule, *summary]), Section("Cells", [grid])]


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
