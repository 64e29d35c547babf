"""wsbench gate without measuring: verdicts, machine fingerprints, thresholds, the wall
gate's ratios, re-measuring and calibration."""

from __future__ import annotations

import pytest

from runkit import run_of
from wsbench.errors import WsbenchError
from wsbench.gate import cells, deterministic, machine, wall
from wsbench.gate.callgrind import Count
from wsbench.model import DeterministicBaseline
from wsbench.gate.verdict import EXIT_CANNOT_RUN, EXIT_PASS, EXIT_REGRESSION, Finding, Outcome, combined_exit

HERE = {"cpu_model": "AMD EPYC", "cpu_flags_sha256": "aa", "cpu_flags": "avx2 erms sse2",
        "valgrind": "valgrind-3.19.0", "cc": "cc (Debian 12.2.0-14) 12.2.0", "libc": "glibc 2.36"}


def baseline_of(per_message: dict[str, float], where: dict[str, str] = HERE) -> DeterministicBaseline:
    return DeterministicBaseline.from_json({"machine": where, "counts": {"quick": {
        k: {"instructions": int(v * 1000), "messages": 1000, "per_message": v} for k, v in per_message.items()}}})


def test_three_percent_either_way() -> None:
    base = baseline_of({"qjs/text_11": 6000.0, "qjs/bin_32": 7000.0, "loadgen/bin_32": 360.0})
    counts = {"qjs/text_11": Count("qjs/text_11", 6220 * 1000, 1000),  # +3.7 %
              "qjs/bin_32": Count("qjs/bin_32", 6770 * 1000, 1000),  # -3.3 %
              "loadgen/bin_32": Count("loadgen/bin_32", 368 * 1000, 1000)}  # +2.2 %
    out = deterministic.judge(counts, base, "quick", HERE)
    verdicts = {f.cell: f.verdict for f in out.findings}
    assert verdicts == {"qjs/text_11": "regression", "qjs/bin_32": "improvement", "loadgen/bin_32": "same"}
    assert out.exit_code == EXIT_REGRESSION
    line = next(f for f in out.findings if f.verdict == "regression").line()
    assert "qjs/text_11" in line and "6,000.0 -> 6,220.0 (+3.67%)" in line


def test_counts_from_another_machine_are_not_compared() -> None:
    other = {**HERE, "cpu_model": "Intel Xeon", "cpu_flags_sha256": "bb", "cpu_flags": "avx512f erms sse2"}
    out = deterministic.judge({"qjs/text_11": Count("qjs/text_11", 1, 1)}, baseline_of({"qjs/text_11": 1.0}, other),
                              "quick", HERE)
    assert out.exit_code == EXIT_CANNOT_RUN and not out.findings
    assert "another machine" in (out.cannot_run or "") and "Intel Xeon" in (out.cannot_run or "")
    why = machine.mismatch(other, HERE) or ""
    assert "only there: avx512f" in why and "only here: avx2" in why
    assert machine.mismatch(HERE, dict(HERE)) is None


def test_a_cell_missing_from_the_baseline_cannot_pass() -> None:
    out = deterministic.judge({"qjs/bin_4k": Count("qjs/bin_4k", 10, 1)}, baseline_of({}), "quick", HERE)
    assert out.exit_code == EXIT_CANNOT_RUN and "qjs/bin_4k" in (out.cannot_run or "")


def test_exit_codes_combine() -> None:
    reg = Outcome("deterministic", [Finding("deterministic", "c", "m", 1.0, 2.0, "regression")])
    cannot = Outcome("wall", [], "no baseline")
    fine = Outcome("wall", [Finding("wall", "c", "m", 1.0, 1.0, "same")])
    assert combined_exit([reg, cannot]) == EXIT_REGRESSION
    assert combined_exit([fine, cannot]) == EXIT_CANNOT_RUN
    assert combined_exit([fine]) == EXIT_PASS


def test_cells_cover_the_owned_code() -> None:
    names = {c.name for c in cells.CELLS}
    for program in ("qjs", "lws-echo", "loadgen"):
        for w in ("text_11", "bin_32", "bin_4k", "bin_64k", "frag4_4k"):
            assert f"{program}/{w}" in names
    assert "qjs/text_1m" in names
    # full TLS handshakes over wss:// (the TLS server args, the client trusting the test CA)
    tls_handshakes = next(c for c in cells.CELLS if c.name == "qjs/tls_handshakes")
    assert tls_handshakes.tls and tls_handshakes.workload == "handshakes" and tls_handshakes.scheme == "wss"
    assert [c.name for c in cells.select(["loadgen"])] == [f"loadgen/{w}" for w in cells.ECHO_WORKLOADS]
    with pytest.raises(WsbenchError, match="unknown gate cell 'qjs/nope'"):
        cells.select(["qjs/nope"])


def wall_run(scale: float = 1.0, noise: tuple[float, ...] = (1.0, 1.02, 0.98, 1.01, 0.99)):
    """Our clients and the reference in five interleaved rounds; ``scale`` multiplies
    the QuickJS client's throughput."""
    values = {}
    for w, rate in (("text_11", 200000.0), ("bin_64k", 20000.0)):
        values[(w, "lws", "node22")] = [rate * n for n in noise]
        values[(w, "lws", "quickjs")] = [rate * 0.6 * scale * n for n in noise]
        values[(w, "lws", "loadgen")] = [rate * 3 * n for n in noise]
    return run_of(values)


def test_ratios_cancel_drift_shared_by_the_round() -> None:
    ratios = wall.ratios(wall_run(), wall.Spec(workloads=("text_11", "bin_64k")))
    assert ratios["text_11/quickjs/msgs_per_s"] == pytest.approx([0.6] * 5)
    assert ratios["bin_64k/loadgen/msgs_per_s"] == pytest.approx([3.0] * 5)


def test_wall_gate_same_run_passes_and_planted_drop_fails() -> None:
    spec = wall.Spec(workloads=("text_11", "bin_64k"))
    base = wall.ratios(wall_run(noise=(1.0, 1.03, 0.97, 1.05, 0.95)), spec)
    same = wall.gate(base, {}, None, base)
    assert same.exit_code == EXIT_PASS and {f.verdict for f in same.findings} == {"same"}
    dropped = wall.ratios(wall_run(scale=0.7, noise=(0.99, 1.02, 0.96, 1.04, 1.0)), spec)
    out = wall.gate(base, {}, None, dropped)
    assert out.exit_code == EXIT_REGRESSION
    regressed = sorted(f.cell for f in out.findings if f.verdict == "regression")
    assert regressed == ["bin_64k/quickjs", "text_11/quickjs"]
    assert all(f.change == pytest.approx(-0.3, abs=0.02) for f in out.findings if f.verdict == "regression")


def test_a_suspect_is_re_measured_before_it_fails() -> None:
    spec = wall.Spec(workloads=("text_11", "bin_64k"))
    base = wall.ratios(wall_run(), spec)
    dropped = wall.ratios(wall_run(scale=0.7), spec)
    asked: list[list[str]] = []

    def recovered(names: list[str]) -> wall.Ratios:
        asked.append(names)
        return base

    out = wall.gate(base, {}, recovered, dropped)
    assert asked == [["bin_64k", "text_11"]]
    assert out.exit_code == EXIT_PASS
    assert all("not confirmed on re-measure" in f.detail for f in out.findings if f.cell.endswith("quickjs"))
    confirmed = wall.gate(base, {}, lambda names: dropped, dropped)
    assert confirmed.exit_code == EXIT_REGRESSION
    assert any("confirmed on re-measure" in f.detail for f in confirmed.findings)


def test_the_minimum_effect_is_needed_too() -> None:
    spec = wall.Spec(workloads=("text_11",))
    base = wall.ratios(wall_run(), spec)
    slower = wall.ratios(wall_run(scale=0.93), spec)  # 7 %: significant, but under 10 %
    assert wall.gate(base, {}, None, slower).exit_code == EXIT_PASS
    strict = {"min_effect": {"throughput": 0.05}}
    assert wall.gate(base, strict, None, slower).exit_code == EXIT_REGRESSION


def test_too_few_repetitions_cannot_pass() -> None:
    spec = wall.Spec(workloads=("text_11",))
    three = wall.ratios(wall_run(noise=(1.0, 1.01, 0.99)), spec)
    out = wall.gate(three, {}, None, three)
    assert out.exit_code == EXIT_CANNOT_RUN and "untestable" in (out.cannot_run or "")


def test_calibration_raises_the_minimum_effect_above_what_unchanged_runs_show() -> None:
    spec = wall.Spec(workloads=("text_11",))
    runs = [wall.ratios(wall_run(scale=s, noise=(1.0, 1.001, 0.999, 1.002, 0.998)), spec) for s in (1.0, 1.12)]
    cal = wall.calibrate(runs)
    assert cal["changed_at_default_thresholds"] >= 1  # 12 % apart with p < 0.01: the defaults would cry wolf
    assert cal["min_effect"]["throughput"] == pytest.approx(1.25 * 0.12, abs=0.002)
    quiet = wall.calibrate([wall.ratios(wall_run(), spec)] * 3)
    assert quiet["min_effect"] == wall.DEFAULT_EFFECT and quiet["changed_at_default_thresholds"] == 0
