"""wsbench compare: a planted difference is found, identical data is unchanged, and cells
with too few repetitions are called untestable."""

from __future__ import annotations

from pathlib import Path

import pytest
from runkit import run_of
from wsbench_runs import wsbench

from wsbench import compare
from wsbench.model import Run, write_json

BASE = [100, 101, 99, 102, 98, 100, 101, 99]  # 8 repetitions: p can go well below 0.01
LATENCY = {"lat": {"description": "", "kind": "latency", "metric": "latency_p99_us"}}


def changes(a: Run, b: Run) -> dict[tuple[str, str], str]:
    found = compare.compare(a, compare.readings(a), compare.readings(b))
    return {(c.workload, c.client): c.verdict for c in found}


def test_planted_differences_are_found() -> None:
    a = run_of({("w", "lws", "fast"): BASE, ("w", "lws", "slow"): BASE, ("w", "lws", "tiny"): BASE,
                ("lat", "lws", "p99"): BASE}, LATENCY)
    b = run_of({("w", "lws", "fast"): [v * 1.3 for v in BASE], ("w", "lws", "slow"): [v * 0.8 for v in BASE],
                ("w", "lws", "tiny"): [v + 5 for v in BASE],  # significant, but under the 10 % minimum effect
                ("lat", "lws", "p99"): [v * 1.15 for v in BASE]},  # slower, under the 20 % minimum for p99
               LATENCY)
    found = changes(a, b)
    assert found == {("w", "fast"): "better", ("w", "slow"): "worse", ("w", "tiny"): "same", ("lat", "p99"): "same"}
    verdicts = compare.compare(a, compare.readings(a), compare.readings(b))
    assert compare.exit_code(verdicts) == compare.EXIT_WORSE
    assert compare.exit_code([v for v in verdicts if v.verdict != "worse"]) == compare.EXIT_BETTER


def test_identical_data_shows_no_change() -> None:
    run = run_of({("w", "lws", "c"): BASE, ("lat", "lws", "c"): BASE}, LATENCY)
    found = compare.compare(run, compare.readings(run), compare.readings(run))
    assert {c.verdict for c in found} == {"same"} and compare.exit_code(found) == compare.EXIT_SAME


def test_three_repetitions_cannot_reach_significance(tmp_path: Path) -> None:
    assert compare.smallest_p(3, 3) == pytest.approx(0.1)
    assert compare.smallest_p(5, 5) < 0.01 < compare.smallest_p(4, 5)
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    write_json(run_of({("w", "lws", "c"): [100, 101, 102]}), a)
    write_json(run_of({("w", "lws", "c"): [200, 201, 202]}), b)  # doubled, but n = 3 + 3
    result = wsbench("compare", str(a), str(b))
    assert result.returncode == compare.EXIT_CANNOT_DECIDE, result.stderr
    assert "3 against 3 repetitions: smallest possible p = 0.1 (1 cells)" in result.stdout
    assert "| +99.0% | 3, 3 | ≥ 0.1 | untestable |" in result.stdout
    html = tmp_path / "cmp.html"
    assert wsbench("compare", str(a), str(b), "-f", "html", "-o", str(html)).returncode == compare.EXIT_CANNOT_DECIDE
    assert "<table>" in html.read_text()


def _files(tmp_path: Path, a: dict, b: dict) -> tuple[str, str]:
    pa, pb = tmp_path / "a.json", tmp_path / "b.json"
    write_json(run_of(a), pa)
    write_json(run_of(b), pb)
    return str(pa), str(pb)


def test_an_untestable_doubled_cell_beside_an_unchanged_one_cannot_be_decided(tmp_path: Path) -> None:
    """The doubled cell has 3 repetitions a side (p >= 0.1 whatever the data): the verdict is
    not "same" because the other cell did not change."""
    a, b = _files(tmp_path, {("w", "lws", "steady"): BASE, ("w", "lws", "doubled"): [100, 101, 102]},
                  {("w", "lws", "steady"): BASE, ("w", "lws", "doubled"): [200, 201, 202]})
    result = wsbench("compare", a, b)
    assert result.returncode == compare.EXIT_CANNOT_DECIDE == 4, result.stdout + result.stderr
    assert "**Verdict: cannot decide** (exit code 4): 0 worse, 0 better, 1 unchanged, 1 untestable" in result.stdout


@pytest.mark.parametrize("factor, code, verdict", [(1.0, 0, "nothing changed"), (0.7, 1, "worse"),
                                                   (1.3, 3, "better only")])
def test_every_verdict_is_its_exit_code_through_the_command_line(tmp_path: Path, factor: float, code: int,
                                                                 verdict: str) -> None:
    a, b = _files(tmp_path, {("w", "lws", "c"): BASE, ("w", "lws", "d"): BASE},
                  {("w", "lws", "c"): [v * factor for v in BASE], ("w", "lws", "d"): BASE})
    result = wsbench("compare", a, b)
    assert result.returncode == code, result.stdout + result.stderr
    assert f"**Verdict: {verdict}** (exit code {code})" in result.stdout


def test_worse_wins_over_cannot_decide(tmp_path: Path) -> None:
    a, b = _files(tmp_path, {("w", "lws", "c"): BASE, ("w", "lws", "few"): [100, 101, 102]},
                  {("w", "lws", "c"): [v * 0.5 for v in BASE], ("w", "lws", "few"): [100, 101, 102]})
    assert wsbench("compare", a, b).returncode == compare.EXIT_WORSE


def test_bad_input_is_exit_code_2_in_one_line(tmp_path: Path) -> None:
    a, _ = _files(tmp_path, {("w", "lws", "c"): BASE}, {("w", "lws", "c"): BASE})
    for args in ([a, str(tmp_path / "missing.json")], [a, a, "--format", "csv"]):
        result = wsbench("compare", *args)
        assert result.returncode == 2 and result.stderr.count("\n") == 1 and not result.stdout, result.stderr
    other = tmp_path / "other.json"
    write_json(run_of({("x", "lws", "c"): BASE}), other)
    result = wsbench("compare", a, str(other))
    assert result.returncode == 2 and "no measured cell in common" in result.stderr
