"""The wall-clock gate end to end on saved run files (no measuring): a run compared with
itself passes, a planted 30 % throughput drop fails, naming the cell."""

from __future__ import annotations

import json
from pathlib import Path

from runkit import run_of
from wsbench_runs import wsbench
from wsbench.gate import baseline
from wsbench.model import write_json

NOISE = (1.0, 1.04, 0.96, 1.02, 0.98)


def synthetic(path: Path, quickjs_scale: float = 1.0) -> Path:
    values = {}
    for w, rate in (("text_11", 200000.0), ("bin_4k", 60000.0), ("bin_64k", 20000.0)):
        values[(w, "lws", "node22")] = [rate * n for n in NOISE]
        values[(w, "lws", "quickjs")] = [rate * 0.6 * quickjs_scale * n for n in NOISE[::-1]]
        values[(w, "lws", "loadgen")] = [rate * 3 * n for n in NOISE]
    write_json(run_of(values), path)
    return path


def planted_drop(source: Path, dest: Path, client: str = "quickjs", factor: float = 0.7) -> Path:
    data = json.loads(source.read_text())
    for cell in data["cells"]:
        if cell["client"] == client:
            for s in cell["samples"]:
                s["msgs_per_s"] = s["msgs_per_s"] * factor if s["msgs_per_s"] else s["msgs_per_s"]
    dest.write_text(json.dumps(data))
    return dest


def test_update_from_a_run_then_gate_it_against_itself_and_a_drop(tmp_path: Path) -> None:
    run = synthetic(tmp_path / "run.json")
    base = tmp_path / "gate.json"
    up = wsbench("gate", "--only", "wall", "--update", "--wall-run", str(run), "--baseline", str(base),
                 "--out", str(tmp_path))
    assert up.returncode == 0, up.stdout + up.stderr
    same = wsbench("gate", "--only", "wall", "--wall-run", str(run), "--baseline", str(base), "--out", str(tmp_path))
    assert same.returncode == 0, same.stdout + same.stderr
    assert "wall gate: 0 regressed, 0 improved, 6 unchanged of 6 checked" in same.stdout
    dropped = planted_drop(run, tmp_path / "dropped.json")
    worse = wsbench("gate", "--only", "wall", "--wall-run", str(dropped), "--baseline", str(base),
                    "--out", str(tmp_path))
    assert worse.returncode == 1, worse.stdout + worse.stderr
    assert "REGRESSION: wall text_11/quickjs msgs_per_s ratio to node22" in worse.stdout
    assert "(-30.00%)" in worse.stdout and "wall gate: 3 regressed" in worse.stdout


def test_the_committed_baseline_against_its_own_run_and_a_drop(tmp_path: Path) -> None:
    path = baseline.DEFAULT_PATH
    section = baseline.wall(baseline.load(path))
    assert section and section.ratios, "baselines/gate.json has no wall-clock ratios"
    same = wsbench("gate", "--only", "wall", "--wall-run", str(path), "--out", str(tmp_path))
    assert same.returncode == 0, same.stdout + same.stderr
    assert " 0 regressed" in same.stdout
    effect = section.thresholds["min_effect"]["throughput"]
    dropped = planted_drop(path, tmp_path / "dropped.json")
    worse = wsbench("gate", "--only", "wall", "--wall-run", str(dropped), "--out", str(tmp_path))
    if effect < 0.30:
        assert worse.returncode == 1, worse.stdout + worse.stderr
        assert "REGRESSION: wall " in worse.stdout and "/quickjs msgs_per_s ratio" in worse.stdout
    else:  # the calibration says this machine cannot see 30 %: the gate must not pretend it can
        assert worse.returncode == 0, worse.stdout + worse.stderr


def test_bad_input_is_one_line(tmp_path: Path) -> None:
    missing = wsbench("gate", "--only", "wall", "--wall-run", str(tmp_path / "nope.json"),
                      "--baseline", str(tmp_path / "b.json"), "--update")
    assert missing.returncode == 2 and missing.stderr.count("\n") == 1 and "nope.json" in missing.stderr
    not_baseline = synthetic(tmp_path / "run.json")
    wrong = wsbench("gate", "--baseline", str(not_baseline))
    assert wrong.returncode == 2 and "not a gate baseline" in wrong.stderr
    bad_cell = wsbench("gate", "--only", "deterministic", "--cell", "qjs/nope", "--baseline", str(tmp_path / "b.json"),
                       "--update")
    assert bad_cell.returncode == 2 and "unknown gate cell 'qjs/nope'" in bad_cell.stderr
