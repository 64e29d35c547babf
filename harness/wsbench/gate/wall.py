"""The wall-clock gate: what instruction counts cannot see (syscall patterns, the kernel,
the other runtimes), gated without crying wolf on a noisy shared machine.

- **Ratios, not rates.** Each of our clients (``quickjs``, ``loadgen``) and a reference
  client (Node 22's built-in WebSocket, not ours) run against the native server in one
  interleaved run (``wsbench run``, at least 5 repetitions); per repetition the gate
  takes our client's metric over the reference's from the same round, so drift of the
  machine that hits both cancels.
- **Two tests must agree** (``compare.compare_cell``, the statistics of ``wsbench
  compare``): a two-sided Mann-Whitney U test over the repetitions' ratios, p < 0.01,
  **and** a change of the median ratio beyond the minimum effect (10 % throughput, 20 %
  p99 latency, or what the calibration stored with the baseline asks for, if more).
- **Re-measured once.** A cell that looks worse is measured again (its workloads only);
  it fails only if it is worse again.

With ``--base REF`` (``gate_pair``) the ratios to beat are not the baseline file's: the base
build's clients (``quickjs@base``, ``loadgen@base``) run in the same interleaved run as the
head's, each with its ratio to the same reference in the same rounds, and the re-measure
measures both again.
"""

from __future__ import annotations

import math
import statistics
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Callable

from .. import compare
from ..metrics import METRICS
from ..ranking import values, workload_metric
from ..model import Run
from .verdict import Finding, Outcome

REFERENCE = "node22"
CLIENTS = ("quickjs", "loadgen")
SERVER = "lws"
WORKLOADS = ("text_11", "bin_4k", "bin_64k")
REPETITIONS = 5
MIN_SECONDS = 1.0
P99 = compare.P99
DEFAULT_EFFECT = {"throughput": compare.DEFAULT_MIN_EFFECT, P99: compare.MIN_EFFECT[P99]}


@dataclass(frozen=True)
class Spec:
    """What the wall gate measures (stored with the baseline, so a gate run repeats it)."""

    reference: str = REFERENCE
    clients: tuple[str, ...] = CLIENTS
    server: str = SERVER
    workloads: tuple[str, ...] = WORKLOADS
    repetitions: int = REPETITIONS
    min_seconds: float = MIN_SECONDS

    def to_json(self) -> dict[str, Any]:
        return {"reference": self.reference, "clients": list(self.clients), "server": self.server,
                "workloads": list(self.workloads), "repetitions": self.repetitions,
                "min_seconds": self.min_seconds}

    @staticmethod
    def from_json(d: dict[str, Any]) -> "Spec":
        return Spec(str(d["reference"]), tuple(d["clients"]), str(d["server"]), tuple(d["workloads"]),
                    int(d["repetitions"]), float(d["min_seconds"]))


Ratios = dict[str, list[float]]  # "workload/client/metric" -> one ratio per repetition


def ratios(run: Run, spec: Spec, names: dict[str, str] | None = None) -> Ratios:
    """Per workload and our client, metric(ours) / metric(reference) in each round both
    completed (a failed repetition on either side drops that round only). ``names``: the
    run's names of the spec's clients and server where they differ (``quickjs@base``);
    the keys keep the spec's names."""
    names = names or {}
    out: Ratios = {}
    server = names.get(spec.server, spec.server)
    for workload in spec.workloads:
        if workload not in run.workloads:
            continue
        metrics = [workload_metric(run, workload)]
        if run.workloads.get(workload, {}).get("kind") in compare.P99_KINDS and P99 not in metrics:
            metrics.append(P99)
        ref = _cell(run, workload, server, spec.reference)
        for client in spec.clients:
            ours = _cell(run, workload, server, names.get(client, client))
            if ref is None or ours is None:
                continue
            for metric in metrics:
                r, o = _by_rep(ref, metric), _by_rep(ours, metric)
                vs = [o[k] / r[k] for k in sorted(set(r) & set(o)) if r[k]]
                if vs:
                    out[f"{workload}/{client}/{metric}"] = vs
    return out


def _cell(run: Run, workload: str, server: str, client: str) -> Any:
    return next((c for c in run.cells if (c.workload, c.server, c.client) == (workload, server, client)), None)


def _by_rep(cell: Any, metric: str) -> dict[int, float]:
    get = METRICS[metric].get
    return {s.rep: float(v) for s in cell.ok_samples if (v := get(s)) is not None}


def min_effect(metric: str, thresholds: dict[str, Any]) -> float:
    effects = thresholds.get("min_effect", {})
    key = P99 if metric == P99 else "throughput"
    return float(effects.get(key, DEFAULT_EFFECT[key]))


def judge(base: Ratios, new: Ratios, thresholds: dict[str, Any]) -> list[Finding]:
    """Every ratio in both: regression (worse by both tests), improvement, or same."""
    findings = []
    for key in sorted(set(base) & set(new)):
        metric = key.rsplit("/", 1)[1]
        p, floor, verdict = compare.compare_cell(base[key], new[key], metric, min_effect(metric, thresholds))
        mapped = {"worse": "regression", "better": "improvement"}.get(verdict, "same")
        detail = (f"untestable: {len(base[key])} against {len(new[key])} repetitions cannot reach p < "
                  f"{compare.ALPHA} (smallest p {floor:.2g})" if verdict == "untestable"
                  else f"p = {p:.3g}, n = {len(base[key])}, {len(new[key])}")
        findings.append(Finding("wall", key.rsplit("/", 1)[0], f"{metric} ratio to {REFERENCE}",
                                round(statistics.median(base[key]), 4), round(statistics.median(new[key]), 4),
                                mapped, detail))
    return findings


def gate(base: Ratios, thresholds: dict[str, Any], measure: Callable[[list[str]], Ratios] | None,
         first: Ratios) -> Outcome:
    """Judge ``first``; with ``measure`` (live runs), re-measure the workloads of cells that
    look worse once and confirm only what is worse again. Without it (a run file given),
    a regression cannot be re-measured and stands as found."""
    if not base:
        return Outcome("wall", [], "the baseline has no wall-clock ratios (run: wsbench gate --update)")
    findings = judge(base, first, thresholds)
    if not findings:
        return Outcome("wall", [], "the run and the baseline have no ratio in common")
    rejudge = None if measure is None else (lambda names: judge(base, measure(names), thresholds))
    lost = sorted(set(base) - set(first))
    return _confirmed(findings, rejudge, [f"no ratio measured for {', '.join(lost)} (a cell failed: see the run's "
                                          "log)"] if lost else [])


def gate_pair(first: tuple[Ratios, Ratios], thresholds: dict[str, Any],
              measure: Callable[[list[str]], tuple[Ratios, Ratios]] | None) -> Outcome:
    """``--base``: the head's ratios against the base's from the same run; suspects are
    re-measured (both builds again, their workloads only) with ``measure``. A ratio the
    base measured and the head's client never did (it failed every round) is a failure."""
    base, head = first
    if not base:
        return Outcome("wall", [], "the base build's clients measured no ratio (see the run's log)")
    findings = judge(base, head, thresholds)
    for key in sorted(set(base) - set(head)):
        workload, client, metric = key.rsplit("/", 2)
        findings.append(Finding("wall", f"{workload}/{client}", f"{metric} ratio to {REFERENCE}",
                                round(statistics.median(base[key]), 4), 0.0, "failed",
                                "the head's client failed every repetition the base's ran (see the run's log)"))
    rejudge = None if measure is None else (lambda names: judge(*measure(names), thresholds))
    return _confirmed(findings, rejudge, [])


def _confirmed(findings: list[Finding], rejudge: Callable[[list[str]], list[Finding]] | None,
               problems: list[str]) -> Outcome:
    """Regressions re-judged on a new measurement of their workloads (``rejudge``) stand
    only if they are regressions again; without ``rejudge`` they stand as found."""
    suspects = [f for f in findings if f.verdict == "regression"]
    if suspects and rejudge is not None:
        again = rejudge(sorted({f.cell.split("/")[0] for f in suspects}))
        by_key = {(f.cell, f.metric): f for f in again}
        confirmed = []
        for f in findings:
            if f.verdict != "regression":
                confirmed.append(f)
                continue
            second = by_key.get((f.cell, f.metric))
            if second is not None and second.verdict == "regression":
                confirmed.append(Finding(f.gate, f.cell, f.metric, second.baseline, second.value, "regression",
                                         f"confirmed on re-measure ({f.detail}; then {second.detail}, "
                                         f"{f.change:+.1%} first)"))
            else:
                confirmed.append(Finding(f.gate, f.cell, f.metric, f.baseline, f.value, "same",
                                         f"suspected ({f.change:+.1%}, {f.detail}), not confirmed on re-measure"))
        findings = confirmed
    elif suspects:
        findings = [Finding(f.gate, f.cell, f.metric, f.baseline, f.value, f.verdict,
                            f.detail + ("; from a run file: not re-measured" if f.verdict == "regression" else ""))
                    for f in findings]
    untestable = [f for f in findings if f.detail.startswith("untestable")]
    if untestable:
        problems = [f"{len(untestable)} of {len(findings)} ratios untestable: too few repetitions "
                    "(at least 5 against 5)", *problems]
    return Outcome("wall", findings, "; ".join(problems) or None)


MARGIN = 1.25


def calibrate(runs: list[Ratios]) -> dict[str, Any]:
    """Thresholds from repeated runs of unchanged code: every pair of runs compared as the
    gate would. Where the significance test alone would call a pair changed (p < 0.01)
    although nothing changed, the minimum effect must lie above that pair's change: it is
    the default (10 % throughput, 20 % p99), raised to 1.25 times the largest such change
    where that is more. The largest change of any pair is recorded beside it."""
    if len(runs) < 2:
        return {"runs": len(runs), "note": "fewer than 2 runs: default minimum effects kept",
                "min_effect": dict(DEFAULT_EFFECT)}
    largest: dict[str, float] = {k: 0.0 for k in DEFAULT_EFFECT}
    significant: dict[str, float] = {k: 0.0 for k in DEFAULT_EFFECT}
    pairs = flagged = 0
    for a, b in combinations(runs, 2):
        for key in sorted(set(a) & set(b)):
            metric = key.rsplit("/", 1)[1]
            kind = P99 if metric == P99 else "throughput"
            ma, mb = statistics.median(a[key]), statistics.median(b[key])
            change = abs(mb - ma) / ma if ma else math.inf
            largest[kind] = max(largest[kind], change)
            p, _, verdict = compare.compare_cell(a[key], b[key], metric)
            pairs += 1
            flagged += verdict in ("worse", "better")
            if p is not None and p < compare.ALPHA:
                significant[kind] = max(significant[kind], change)
    effects = {k: round(max(DEFAULT_EFFECT[k], MARGIN * significant[k]), 3) for k in DEFAULT_EFFECT}
    return {"runs": len(runs), "comparisons": pairs,
            "largest_median_change": {k: round(v, 4) for k, v in largest.items()},
            "largest_change_with_p_below_alpha": {k: round(v, 4) for k, v in significant.items()},
            "changed_at_default_thresholds": flagged, "margin": MARGIN, "min_effect": effects}


def thresholds_from(calibration: dict[str, Any]) -> dict[str, Any]:
    return {"alpha": compare.ALPHA, "min_effect": calibration.get("min_effect", dict(DEFAULT_EFFECT)),
            "calibration": calibration}
