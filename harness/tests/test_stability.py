"""wsbench stability: CV distributions per run and agreement between runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from wsbench_runs import wsbench

from wsbench.model import SCHEMA, SCHEMA_VERSION, read_json
from wsbench.stability import RANKING, agreement, drift, percentile, spread


def run_file(path: Path, rates: dict[str, list[float]], cpu_s: float = 1.0) -> Path:
    cells = [{"workload": "w", "server": "s", "client": c,
              "samples": [{"rep": i + 1, "messages": 1000, "seconds": 1.0, "msgs_per_s": r, "client_cpu_s": cpu_s}
                          for i, r in enumerate(values)]}
             for c, values in rates.items()]
    path.write_text(json.dumps({
        "schema": SCHEMA, "schema_version": SCHEMA_VERSION, "created": "t", "command": [], "suite": None,
        "repetitions": 3, "settings": {"min_seconds": 1, "verify": "on", "pinning": None},
        "environment": {}, "workloads": {"w": {"metric": "msgs_per_s"}}, "servers": {}, "clients": {},
        "cells": cells}))
    return path


def test_spread_and_agreement_of_known_values(tmp_path: Path) -> None:
    a = read_json(run_file(tmp_path / "a.json", {"x": [100, 100, 100], "y": [90, 100, 110], "z": [50, 100, 150]}))
    b = read_json(run_file(tmp_path / "b.json", {"x": [100, 100, 100], "y": [200, 210, 220], "z": [60, 100, 140]}))
    s = spread(a, RANKING)
    assert s is not None and s.cells == 3
    assert s.median_cv == pytest.approx(0.1) and s.worst_cv == pytest.approx(0.5)
    assert s.within_goal == pytest.approx(1 / 3)
    cpu = spread(a, "client_cpu_us_per_msg")
    assert cpu is not None and cpu.median_cv == 0.0 and cpu.within_goal == 1.0
    g = agreement(a, b, RANKING)
    assert g is not None and g.cells == 3
    assert g.overlapping == pytest.approx(2 / 3)  # y moved far away, x and z did not
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.9) == pytest.approx(4.6)


def test_the_command_prints_both_tables_and_rejects_bad_files(tmp_path: Path) -> None:
    a = run_file(tmp_path / "a.json", {"x": [100, 101, 99]})
    b = run_file(tmp_path / "b.json", {"x": [100, 102, 98]})
    proc = wsbench("stability", str(a), str(b))
    assert proc.returncode == 0, proc.stderr
    assert "| a.json | ≥ 1 s, unpinned, 3 reps | 1 |" in proc.stdout
    assert "| a.json | b.json | ranking metric | 1 | 100% | 100% |" in proc.stdout
    (tmp_path / "bad.json").write_text("{")
    bad = wsbench("stability", str(tmp_path / "bad.json"))
    assert bad.returncode == 2 and "bad.json: not JSON" in bad.stderr and bad.stderr.count("\n") == 1


def test_drift_shared_by_every_cell_is_separated_from_the_cells_own_spread(tmp_path: Path) -> None:
    # round 2 is 10 % slower for every cell: all of their spread is the machine's
    run = read_json(run_file(tmp_path / "d.json", {"x": [100, 90, 100], "y": [50, 45, 50], "z": [10, 9, 10]}))
    d = drift(run, RANKING)
    assert d is not None and d.factors == pytest.approx([100 / 96.667, 90 / 96.667, 100 / 96.667], rel=1e-4)
    assert d.median_cv_adjusted == pytest.approx(0.0)
    assert spread(run, RANKING).median_cv > 0.05  # type: ignore[union-attr]
