"""The ``gate`` section of a results file as report sections (``wsbench report`` of a
gate report or of the baseline)."""

from __future__ import annotations

from typing import Any

from ..doc import Grid, Section


def sections(gate: dict[str, Any] | None) -> list[Section]:
    if not isinstance(gate, dict):
        return []
    if gate.get("role") == "baseline":
        return _baseline(gate)
    grid = Grid(["gate", "cell", "metric", "baseline", "value", "change", "verdict", "detail"], right={3, 4, 5})
    for o in gate.get("outcomes") or []:
        for f in o.get("findings") or []:
            grid.add([f["gate"], f["cell"], f["metric"], f"{f['baseline']:,}", f"{f['value']:,}",
                      f"{f['change']:+.2%}", f"**{f['verdict']}**" if f["verdict"] != "same" else "same",
                      f.get("detail", "")])
    why = [f"{o['gate']} gate could not run: {o['cannot_run']}" for o in gate.get("outcomes") or []
           if o.get("cannot_run")]
    return [Section("Regression gate", [f"Exit code {gate.get('exit_code')} against `{gate.get('baseline')}` "
                                        f"({gate.get('profile')} message counts).", *why, grid])]


def _baseline(gate: dict[str, Any]) -> list[Section]:
    out = []
    det = gate.get("deterministic") or {}
    counts = det.get("counts") or {}
    if counts:
        grid = Grid(["cell", *[f"{p}: instructions/message" for p in counts], *[f"{p}: messages" for p in counts]],
                    right=set(range(1, 1 + 2 * len(counts))))
        for name in sorted({n for c in counts.values() for n in c}):
            grid.add([name, *[f"{counts[p].get(name, {}).get('per_message', 0):,.1f}" for p in counts],
                      *[f"{counts[p].get(name, {}).get('messages', 0):,}" for p in counts]])
        m = det.get("machine") or {}
        out.append(Section("Gate baseline: instruction counts", [
            f"Counted on {m.get('cpu_model')} (flags sha256 {str(m.get('cpu_flags_sha256'))[:12]}), "
            f"{m.get('cc')}, {m.get('libc')}, {m.get('valgrind')}; fail above +{det.get('rise', 0):.0%}.", grid]))
    wall = gate.get("wall") or {}
    if wall.get("ratios"):
        grid = Grid(["ratio (ours / reference, per repetition)", "values"])
        for key, vs in sorted(wall["ratios"].items()):
            grid.add([key, ", ".join(f"{v:.3f}" for v in vs)])
        th = wall.get("thresholds") or {}
        out.append(Section("Gate baseline: wall-clock ratios", [
            f"Minimum effects {th.get('min_effect')}, alpha {th.get('alpha')}; calibration: "
            f"{th.get('calibration')}.", grid]))
    return out
