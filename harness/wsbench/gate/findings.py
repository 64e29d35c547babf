"""The gate's findings as report sections (``wsbench report`` of a gate report or of the
baseline), and a gate report as a document of its own (``reports/gate-*.md``, and with
``--summary FILE`` the job summary of CI): the verdict, then the verdict table. Both are
rendered by the report's exporters."""

from __future__ import annotations

from typing import Any

from ..doc import Block, Bullets, Details, Grid, Report, Section
from ..model import FAILING, DeterministicBaseline, Gate, GateBaseline, GateReport
from .verdict import summary_lines

VERDICT = {0: "pass", 1: "REGRESSION", 2: "could not run"}
ORDER = {"failed": 0, "regression": 1, "improvement": 2, "same": 3}


def sections(gate: Gate | None, builds: dict[str, Any] | None = None) -> list[Section]:
    """``builds``: the report's ``environment.gate_builds`` (``--base``): then the figures
    compared are the base's and the head's, counted in the same job."""
    if gate is None:
        return []
    if isinstance(gate, GateBaseline):
        return _baseline(gate)
    pair = builds is not None
    grid = Grid(["gate", "cell", "metric", "base" if pair else "baseline", "head" if pair else "value", "change",
                 "verdict", "detail"], right={3, 4, 5})
    findings = [f for o in gate.outcomes for f in o.findings]
    for f in sorted(findings, key=lambda f: ORDER.get(f.verdict, 9)):
        failed = f.verdict == "failed"
        grid.add([f.gate, f.cell, f.metric, f"{f.baseline:,}", "–" if failed else f"{f.value:,}",
                  "–" if failed else f"{round(f.change, 6):+.2%}",
                  f"**{f.verdict}**" if f.verdict != "same" else "same", f.detail])
    why = [f"{o.gate} gate could not run: {o.cannot_run}" for o in gate.outcomes if o.cannot_run]
    return [Section("Regression gate", [_against(gate, builds) + f" Exit code {gate.exit_code}.", *why, grid])]


def document(gate: GateReport, builds: dict[str, Any] | None, report: str, title: str | None = None) -> Report:
    """The gate report (``reports/gate-*.md``, the job summary of CI): the verdict, what was
    compared, every gate's summary line, the findings that are not "same", then the full
    table folded away; ``title``: the document's own (the .md file has one, the job summary
    none)."""
    code = gate.exit_code
    blocks: list[Block] = [_against(gate, builds), Bullets(summary_lines(gate.outcomes, findings=False))]
    rows = [f for o in gate.outcomes for f in o.findings]
    if rows:
        table = sections(gate, builds)[0].blocks[-1]
        assert isinstance(table, Grid)
        named = [r for r, f in zip(table.rows, sorted(rows, key=lambda f: ORDER.get(f.verdict, 9)))
                 if f.verdict != "same"]
        if named:
            blocks.append(Grid(table.headers, table.right, named, [[None] * len(table.headers)] * len(named)))
        blocks.append(Details(f"All {len(rows)} figures compared", [table]))
    blocks.append(f"Report: `{report}`.")
    return Report(title, None, [], [Section(f"wsbench gate: {VERDICT.get(code, code)} (exit {code})", blocks)])


def _against(gate: GateReport, builds: dict[str, Any] | None) -> str:
    if not builds:
        return f"Against `{gate.baseline}` ({gate.profile} message counts)."
    base, head = builds.get("base") or {}, builds.get("head") or {}
    head_what = f"`{str(head.get('commit'))[:12]}`" if head.get("commit") else "the working tree"
    if head.get("ref"):
        head_what += f" (`{head['ref']}`)"
    if head.get("tree") == "." and head.get("dirty"):
        head_what += " with uncommitted changes"
    built = "cached" if base.get("cached") else "built cold"
    return (f"Head {head_what} against base `{str(base.get('commit'))[:12]}` (`{base.get('ref')}`), both counted "
            f"and measured in this job on this machine ({gate.profile} message counts; base {built} in "
            f"{base.get('build_s')} s).")


def failing(gate: GateReport) -> list[str]:
    """The cells a gate report names as failing (regressed or failed)."""
    return [f"{f.gate} {f.cell}" for o in gate.outcomes for f in o.findings if f.verdict in FAILING]


def _counts_grid(det: DeterministicBaseline) -> Grid:
    counts = det.counts
    grid = Grid(["cell", *[f"{p}: instructions/message" for p in counts], *[f"{p}: messages" for p in counts]],
                right=set(range(1, 1 + 2 * len(counts))))
    for name in sorted({n for c in counts.values() for n in c}):
        grid.add([name, *[f"{_count(counts[p], name, 'per_message'):,.1f}" for p in counts],
                  *[f"{_count(counts[p], name, 'messages'):,}" for p in counts]])
    return grid


def _baseline(gate: GateBaseline) -> list[Section]:
    out = []
    det = gate.deterministic
    if det and det.counts:
        m = det.machine
        out.append(Section("Gate baseline: instruction counts", [
            f"Counted on {m.get('cpu_model')} (flags sha256 {str(m.get('cpu_flags_sha256'))[:12]}), "
            f"{m.get('cc')}, {m.get('libc')}, {m.get('valgrind')}; fail above +{det.rise:.0%}.", _counts_grid(det)]))
    for arch, other in sorted(gate.arches.items()):
        if not other.counts:
            continue
        m = other.machine
        out.append(Section(f"Gate baseline: instruction counts on {arch}", [
            f"Counted under {m.get('qemu')} with the plugin {m.get('plugin')} (source sha256 "
            f"{str(m.get('plugin_source_sha256'))[:12]}), built by {m.get('arm_cc')} against {m.get('arm_sysroot')}; "
            f"fail above +{other.rise:.0%}. Instruction counts, never times (docs/arm.md).", _counts_grid(other)]))
    wall = gate.wall
    if wall and wall.ratios:
        grid = Grid(["ratio (ours / reference, per repetition)", "values"])
        for key, vs in sorted(wall.ratios.items()):
            grid.add([key, ", ".join(f"{v:.3f}" for v in vs)])
        th = wall.thresholds
        out.append(Section("Gate baseline: wall-clock ratios", [
            f"Minimum effects {th.get('min_effect')}, alpha {th.get('alpha')}; calibration: "
            f"{th.get('calibration')}.", grid]))
    return out


def _count(cells: dict, name: str, figure: str) -> float:
    count = cells.get(name)
    return getattr(count, figure) if count is not None else 0
