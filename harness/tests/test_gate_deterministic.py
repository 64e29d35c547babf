"""The deterministic gate for real: the programs under callgrind on the reduced (quick)
message counts, as `make test` runs it.

- against the committed baseline (baselines/gate.json): passes on the machine it was
  counted on; on any other machine it must refuse with exit 2 and say why;
- against a baseline taken here and now (so on every machine, CI's included): ten
  consecutive runs of unchanged code never fail, and the QuickJS client with one
  optimization switched off (QJSWS_DISABLE) fails, naming the cell and the change.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from wsbench_runs import PY, ROOT
from wsbench.gate import baseline, machine
from wsbench.gate.cells import CELLS as ALL_CELLS
from wsbench.model.schema import SCHEMA_VERSION

# One cell per program, and the fragmented receive path of the QuickJS client.
CELLS = ("qjs/text_11", "qjs/frag4_4k", "lws-echo/bin_4k", "loadgen/bin_32")
REPEATS = 10


def gate(*args: str, env: dict[str, str] | None = None, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    return subprocess.run([PY, "-m", "wsbench", "gate", "--only", "deterministic", "--quick", *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL,
                          env={k: v for k, v in {**os.environ, **(env or {})}.items() if v is not None})


def cell_args() -> list[str]:
    return [a for c in CELLS for a in ("--cell", c)]


@pytest.fixture(scope="module")
def fresh_baseline(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("gate") / "gate.json"
    out = gate("--update", "--baseline", str(path), "--out", str(path.parent), "-q", *cell_args(),
               env={"QJSWS_DISABLE": ""})
    assert out.returncode == 0, out.stdout + out.stderr
    return path


def test_committed_baseline_passes_here_or_refuses_another_machine(tmp_path: Path) -> None:
    committed = baseline.load(baseline.DEFAULT_PATH)
    assert committed is not None, "baselines/gate.json is missing"
    section = baseline.deterministic(committed)
    assert section and set(section.counts) == {"full", "quick"}
    out = gate("--out", str(tmp_path), "-q", env={"QJSWS_DISABLE": ""})
    why = machine.mismatch(section.machine, machine.fingerprint())
    if why is None:
        assert out.returncode == 0, out.stdout + out.stderr
        assert re.search(r"deterministic gate: 0 regressed, \d+ improved, \d+ unchanged of %d checked" % len(ALL_CELLS),
                         out.stdout), out.stdout
    else:
        assert out.returncode == 2, out.stdout + out.stderr
        assert "taken on another machine" in out.stdout and "exit 2" in out.stdout
    report = json.loads(next(tmp_path.glob("gate-*.json")).read_text())
    assert report["schema_version"] == SCHEMA_VERSION and report["gate"]["role"] == "report"
    assert report["gate"]["exit_code"] == out.returncode


def test_ten_consecutive_runs_of_unchanged_code_never_fail(fresh_baseline: Path, tmp_path: Path) -> None:
    per_cell: dict[str, list[float]] = {}
    for i in range(REPEATS):
        out = gate("--baseline", str(fresh_baseline), "--out", str(tmp_path / str(i)), "-q", *cell_args(),
                   env={"QJSWS_DISABLE": ""})
        assert out.returncode == 0, f"run {i + 1}: " + out.stdout + out.stderr
        assert f"0 regressed, 0 improved, {len(CELLS)} unchanged" in out.stdout
        report = json.loads(next((tmp_path / str(i)).glob("gate-*.json")).read_text())
        for f in report["gate"]["outcomes"][0]["findings"]:
            per_cell.setdefault(f["cell"], []).append(f["value"])
    spread = {c: (max(v) - min(v)) / min(v) for c, v in per_cell.items()}
    print("spread over", REPEATS, "runs:", {c: f"{s:.3%}" for c, s in spread.items()})
    assert set(spread) == set(CELLS)
    assert max(spread.values()) < 0.03  # the gate's threshold: never crossed by unchanged code


@pytest.mark.parametrize("switch, cell", [("eventpool", "qjs/text_11"), ("join", "qjs/frag4_4k")])
def test_a_switched_off_optimization_is_caught(fresh_baseline: Path, tmp_path: Path, switch: str,
                                               cell: str) -> None:
    out = gate("--baseline", str(fresh_baseline), "--out", str(tmp_path), "--cell", "qjs/text_11",
               "--cell", "qjs/frag4_4k", env={"QJSWS_DISABLE": switch})
    assert out.returncode == 1, out.stdout + out.stderr
    line = next(line for line in out.stdout.splitlines() if line.startswith(f"REGRESSION: deterministic {cell} "))
    change = float(re.search(r"\(\+([\d.]+)%\)", line).group(1))  # type: ignore[union-attr]
    assert change > 3.0, line
    assert "wsbench gate: REGRESSION (exit 1)" in out.stdout
