"""The comparable default run (docs/reports.md): `wsbench compare` with the drift every cell
shares divided out, on runs of 6 repetitions (the quick suite's), tested on synthetic runs
shaped like the quick suite's (112 cells) with the kinds of noise this shared machine has:
a pace per run, a pace per repetition round, each cell's own noise, rare slow outliers.

- 3 against 3 repetitions (the old default) can decide nothing;
- unchanged code, 6 against 6: at most 1 % of the cells are called changed, where testing
  the values as measured (--raw) calls many;
- a planted drop of one client's cells (16 of 112) is found: 20 % in at least 80 % of the
  pairs, 30 % in at least 90 % (what is missed is mostly a pair where one of run A's 6
  repetitions had a hiccup, which a rank test counts against the change), and no more
  than 1 % of the other cells are called changed;
- a shift shared by every cell is measured and removed, and said when it is large.
"""

from __future__ import annotations

import math
import random
import re
import subprocess
from pathlib import Path

import pytest
from runkit import run_of
from wsbench_runs import PY, ROOT

from wsbench import compare
from wsbench.model import write_json

WORKLOADS = ("text_11", "bin_32", "bin_4k", "bin_64k")
SERVERS = ("lws", "node-ws", "bun", "deno")
CLIENTS = ("quickjs", "quickjs-baseline", "node22", "node-ws", "bun", "deno", "loadgen")
PAIRS = 20  # pairs of runs per scenario


def level(rng: random.Random) -> dict[tuple[str, str, str], float]:
    """Each cell's true msgs/s (spread over two orders of magnitude, as in the quick suite)."""
    return {(w, s, c): 10 ** rng.uniform(3.5, 6) for w in WORKLOADS for s in SERVERS for c in CLIENTS}


def measured(rng: random.Random, truth: dict[tuple[str, str, str], float], reps: int, *, run_sd: float = 0.08,
             round_sd: float = 0.05, cell_sd: float = 0.02, noise_sd: float = 0.04,
             planted: dict[tuple[str, str, str], float] | None = None) -> dict[tuple[str, str, str], list[float]]:
    """One run: a pace shared by the run, one per round, one per cell and run (drift that
    is not shared: it cannot be removed), noise per sample, and 3 % of the samples 30 %
    slow (a hiccup)."""
    run = rng.gauss(0, run_sd)
    rounds = [rng.gauss(0, round_sd) for _ in range(reps)]
    out = {}
    for key, value in truth.items():
        cell = rng.gauss(0, cell_sd)
        factor = (planted or {}).get(key, 1.0)
        out[key] = [value * factor * math.exp(run + rounds[r] + cell + rng.gauss(0, noise_sd))
                    * (0.7 if rng.random() < 0.03 else 1.0) for r in range(reps)]
    return out


def decided(a: dict, b: dict, raw: bool = False) -> dict[tuple[str, str, str], str]:
    ra, rb = run_of(a), run_of(b)
    return {(c.workload, c.server, c.client): c.verdict
            for c in compare.compare(ra, compare.readings(ra), compare.readings(rb), raw=raw)}


def test_three_against_three_decides_nothing() -> None:
    rng = random.Random(3)
    truth = level(rng)
    verdicts = decided(measured(rng, truth, 3), measured(rng, truth, 3))
    assert len(verdicts) == 112 and set(verdicts.values()) == {"untestable"}


def test_unchanged_code_is_called_changed_in_at_most_one_percent_of_cells() -> None:
    rng = random.Random(6)
    truth = level(rng)
    corrected = raw = cells = 0
    for _ in range(PAIRS):
        a, b = measured(rng, truth, 6), measured(rng, truth, 6)
        got = decided(a, b)
        assert "untestable" not in got.values()
        cells += len(got)
        corrected += sum(v in ("worse", "better") for v in got.values())
        raw += sum(v in ("worse", "better") for v in decided(a, b, raw=True).values())
    print(f"false positives over {PAIRS} pairs x 112 cells: drift removed {corrected}/{cells}, raw {raw}/{cells}")
    assert corrected / cells <= 0.01
    assert raw / cells > 0.05  # the machine's pace between runs, tested as a change


@pytest.mark.parametrize("drop, power", [(0.2, 0.8), (0.3, 0.9)])
def test_a_planted_drop_of_one_client_is_found(drop: float, power: float) -> None:
    rng = random.Random(20)
    truth = level(rng)
    slow = {k: 1 - drop for k in truth if k[2] == "quickjs"}
    found = missed = false = 0
    for _ in range(PAIRS):
        got = decided(measured(rng, truth, 6), measured(rng, truth, 6, planted=slow))
        found += sum(got[k] == "worse" for k in slow)
        missed += sum(got[k] != "worse" for k in slow)
        false += sum(v in ("worse", "better") for k, v in got.items() if k not in slow)
    print(f"planted -{drop:.0%} on {len(slow)} cells x {PAIRS} pairs: found {found}, missed {missed}; others called "
          f"changed: {false}")
    assert found / (found + missed) >= power
    assert false / (PAIRS * (112 - len(slow))) <= 0.01


def test_the_shared_shift_is_measured_removed_and_called_out_when_large() -> None:
    rng = random.Random(15)
    truth = level(rng)
    a = measured(rng, truth, 6, run_sd=0, round_sd=0.05)
    b = {k: [v * 0.75 for v in vs] for k, vs in measured(rng, truth, 6, run_sd=0, round_sd=0.05).items()}
    ra, rb = run_of(a), run_of(b)
    changes, drift = compare.judged(ra, compare.readings(ra), compare.readings(rb))
    # 0.75, and the difference of the two runs' mean pace over their 6 rounds (sd 0.05 / √6 each)
    assert drift is not None and drift.shift["msgs_per_s"] == pytest.approx(0.75, rel=0.05)
    assert drift.cells["msgs_per_s"] == 112 and len(drift.rounds["msgs_per_s"][0]) == 6
    assert sum(c.verdict in ("worse", "better") for c in changes) <= 1
    text = "\n".join(b for s in compare.sections(ra, rb, ("a", "b"), changes, drift) for b in s.blocks
                     if isinstance(b, str))
    assert f"shared by all cells: {drift.shift['msgs_per_s'] - 1:+.1%}" in text and "beyond the minimum effect" in text


def test_too_few_cells_are_tested_as_measured() -> None:
    a = run_of({("w", "lws", c): [100, 101, 99, 102, 98, 100] for c in ("x", "y")})
    b = run_of({("w", "lws", c): [130, 131, 129, 132, 128, 130] for c in ("x", "y")})
    changes, drift = compare.judged(a, compare.readings(a), compare.readings(b))
    assert drift is not None and drift.shift == {} and {c.verdict for c in changes} == {"better"}


def test_the_campaign_script_analyzes_runs_of_unchanged_and_planted_code(tmp_path: Path) -> None:
    """scripts/compare_campaign.py analyze (the lead's campaign on the real machine) over
    synthetic runs: its two tables and the two figures it is for."""
    rng = random.Random(8)
    truth = level(rng)
    for i in range(3):
        (tmp_path / f"{i}-unchanged").mkdir()
        write_json(run_of(measured(rng, truth, 6)), tmp_path / f"{i}-unchanged" / "run-1.json", summaries=False)
    plant = run_of(measured(rng, truth, 6, planted={k: 0.7 for k in truth if k[2].startswith("quickjs")}))
    plant.environment["planted"] = {"WSBENCH_PLANT_SPIN": 5}
    (tmp_path / "3-plant-5").mkdir()
    write_json(plant, tmp_path / "3-plant-5" / "run-1.json", summaries=False)
    out = subprocess.run([PY, str(ROOT / "scripts" / "compare_campaign.py"), "analyze", str(tmp_path)],
                         capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    summary = (tmp_path / "summary.md").read_text()
    assert "3 runs of unchanged code (3 pairs), 1 planted runs" in summary
    assert re.search(r"\*\*False-positive rate: \d+ of 336 cell comparisons", summary)
    assert "**Smallest planted change found in at least 80% of the pairs:" in summary
