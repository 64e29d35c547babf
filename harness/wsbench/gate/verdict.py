"""What both gates answer: a verdict per checked figure, and the exit code of the whole.

A ``Finding`` and an ``Outcome`` are recorded in the gate's report as they are
(model/gate.py). Exit codes: 0 nothing regressed (improvements are reported, worth ``--update``); 1 a
confirmed regression; 2 the gate could not run (one line saying why).
"""

from __future__ import annotations

from ..model import EXIT_CANNOT_RUN, EXIT_PASS, EXIT_REGRESSION, FAILING, Finding, Outcome

__all__ = ["EXIT_CANNOT_RUN", "EXIT_PASS", "EXIT_REGRESSION", "Finding", "Outcome", "combined_exit", "summary_lines"]


def combined_exit(outcomes: list[Outcome]) -> int:
    codes = {o.exit_code for o in outcomes}
    if EXIT_REGRESSION in codes:
        return EXIT_REGRESSION
    return EXIT_CANNOT_RUN if EXIT_CANNOT_RUN in codes else EXIT_PASS


def summary_lines(outcomes: list[Outcome], against: str = "baseline", findings: bool = True) -> list[str]:
    """The report: regressions first, then improvements (``findings``), then one summary
    line per gate; ``against``: what the figures are compared with (``base`` for --base)."""
    lines = []
    for o in outcomes:
        for f in sorted(o.findings, key=lambda f: ({"failed": 0, "regression": 0, "improvement": 1}.get(f.verdict, 2),
                                                    -abs(f.change))):
            if f.verdict != "same" and findings:
                lines.append(f.line(against) + (" (worth `wsbench gate --update`)"
                                                if f.verdict == "improvement" and against == "baseline" else ""))
    for o in outcomes:
        n = len(o.findings)
        reg = sum(f.verdict in FAILING for f in o.findings)
        imp = sum(f.verdict == "improvement" for f in o.findings)
        if o.cannot_run:
            lines.append(f"the gate could not run: {o.cannot_run}" if o.gate == "build"
                         else f"{o.gate} gate: could not run: {o.cannot_run}")
        elif o.gate == "build":  # --base: the head did not build (its FAILED line is above)
            continue
        else:
            lines.append(f"{o.gate} gate: {reg} regressed, {imp} improved, {n - reg - imp} unchanged "
                         f"of {n} checked")
    return lines
