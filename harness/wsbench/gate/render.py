"""The ``gate`` section of a results file as report sections (``wsbench report`` of a
gate report or of the baseline)."""

from __future__ import annotations

from ..doc import Grid, Section
from ..records import Gate, GateBaseline


def sections(gate: Gate | None) -> list[Section]:
    if gate is None:
        return []
    if isinstance(gate, GateBaseline):
        return _baseline(gate)
    grid = Grid(["gate", "cell", "metric", "baseline", "value", "change", "verdict", "detail"], right={3, 4, 5})
    for o in gate.outcomes:
        for f in o.findings:
            grid.add([f.gate, f.cell, f.metric, f"{f.baseline:,}", f"{f.value:,}",
                      f"{round(f.change, 6):+.2%}", f"**{f.verdict}**" if f.verdict != "same" else "same", f.detail])
    why = [f"{o.gate} gate could not run: {o.cannot_run}" for o in gate.outcomes if o.cannot_run]
    return [Section("Regression gate", [f"Exit code {gate.exit_code} against `{gate.baseline}` "
                                        f"({gate.profile} message counts).", *why, grid])]


def _baseline(gate: GateBaseline) -> list[Section]:
    out = []
    det = gate.deterministic
    counts = det.counts if det else {}
    if det and counts:
        grid = Grid(["cell", *[f"{p}: instructions/message" for p in counts], *[f"{p}: messages" for p in counts]],
                    right=set(range(1, 1 + 2 * len(counts))))
        for name in sorted({n for c in counts.values() for n in c}):
            grid.add([name, *[f"{_count(counts[p], name, 'per_message'):,.1f}" for p in counts],
                      *[f"{_count(counts[p], name, 'messages'):,}" for p in counts]])
        m = det.machine
        out.append(Section("Gate baseline: instruction counts", [
            f"Counted on {m.get('cpu_model')} (flags sha256 {str(m.get('cpu_flags_sha256'))[:12]}), "
            f"{m.get('cc')}, {m.get('libc')}, {m.get('valgrind')}; fail above +{det.rise:.0%}.", grid]))
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
