"""`wsbench gate --base REF` for real, on a few quick cells: the base commit built in
build/base/<sha>/ and counted beside the head in one run.

- a REF that does not exist, or a base that does not build: exit 2 with the reason;
- a head that does not build: exit 1 (a failure of the change, not a skip);
- base == head passes, and the second run reuses the base's build (cached);
- a planted per-message loop in the module's delivery path fails, naming the cells.

The commits that break or slow something are made in a throw-away clone (objects shared
with this repository's, read-only), whose harness is this working tree's; its build/prefix
is this checkout's (same pins).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from wsbench_runs import PY, ROOT

CELLS = ("qjs/text_11", "lws-echo/bin_32", "loadgen/bin_32")
# the module's delivery of one message (src/rx.c), whichever way it reaches JS
PLANT_FILE = Path("quickjs-websocket") / "src" / "rx.c"
PLANT_AT = "static void deliver_message(conn *c, JSValue v)\n{\n"
PLANT = (PLANT_AT, PLANT_AT + "    for (volatile int spin = 0; spin < 300; spin++) /* planted */\n        ;\n")


def gate(cwd: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QJSWS_DISABLE": "", "PYTHONPATH": str(cwd / "harness")}
    return subprocess.run([PY, "-m", "wsbench", "gate", "--only", "deterministic", "--quick", *args],
                          cwd=cwd, capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL, env=env)


def cell_args(cells: tuple[str, ...] = CELLS) -> list[str]:
    return [a for c in cells for a in ("--cell", c)]


def git(cwd: Path, *args: str) -> str:
    out = subprocess.run(["git", "-C", str(cwd), *args], capture_output=True, text=True, timeout=60,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def report(out: Path) -> dict:
    return json.loads(next(out.glob("gate-2*.json")).read_text())


@pytest.fixture(scope="module")
def clone(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path | str]:
    """A clone of this repository (its HEAD) with this working tree's harness and build
    script, and three commits on top: one whose lws-echo does not compile, one whose
    module spins in its delivery path, and nothing else."""
    if not (ROOT / "build" / "prefix" / "bin" / "qjs").exists():
        pytest.skip("build/prefix is missing (run: make setup)")
    where = tmp_path_factory.mktemp("gate-base") / "repo"
    subprocess.run(["git", "clone", "--quiet", "--shared", str(ROOT), str(where)], check=True, timeout=120,
                   capture_output=True, stdin=subprocess.DEVNULL)
    shutil.rmtree(where / "harness" / "wsbench")
    shutil.copytree(ROOT / "harness" / "wsbench", where / "harness" / "wsbench",
                    ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy2(ROOT / "scripts" / "build-tree.sh", where / "scripts" / "build-tree.sh")
    (where / "build").mkdir()
    (where / "build" / "prefix").symlink_to(ROOT / "build" / "prefix")
    ident = ["-c", "user.name=wsbench test", "-c", "user.email=test@wsbench.invalid"]
    git(where, *ident, "commit", "--quiet", "--allow-empty", "-a", "-m", "this working tree's harness")
    parent = git(where, "rev-parse", "HEAD")
    rx = where / PLANT_FILE
    source = rx.read_text()
    assert PLANT_AT in source, f"{PLANT_FILE} no longer has the line the test plants after"
    rx.write_text(source.replace(*PLANT, 1))
    git(where, *ident, "commit", "--quiet", "-a", "-m", "planted: a loop per delivered message")
    planted = git(where, "rev-parse", "HEAD")
    git(where, "checkout", "--quiet", parent)
    echo = sorted((where / "servers" / "lws").glob("*.c"))[0]
    echo.write_text("#error planted: this commit does not build\n" + echo.read_text())
    git(where, *ident, "commit", "--quiet", "-a", "-m", "broken: lws-echo does not compile")
    broken = git(where, "rev-parse", "HEAD")
    git(where, "checkout", "--quiet", parent)
    return {"dir": where, "parent": parent, "planted": planted, "broken": broken}


def test_a_base_that_does_not_exist_exits_2_with_the_reason(tmp_path: Path) -> None:
    out = gate(ROOT, "--base", "no-such-ref-anywhere", "--out", str(tmp_path), "-q")
    assert out.returncode == 2, out.stdout + out.stderr
    assert "--base no-such-ref-anywhere: not a commit of this repository" in out.stdout
    assert "Traceback" not in out.stderr and report(tmp_path)["gate"]["exit_code"] == 2


def test_a_base_that_does_not_build_exits_2_naming_the_step(clone: dict, tmp_path: Path) -> None:
    out = gate(clone["dir"], "--base", str(clone["broken"]), "--out", str(tmp_path), "-q", *cell_args())
    assert out.returncode == 2, out.stdout + out.stderr
    assert f"--base {clone['broken']} ({str(clone['broken'])[:12]}) does not build" in out.stdout
    assert "build/bin/lws-echo does not build" in out.stdout and "#error planted" in out.stdout
    assert "Traceback" not in out.stderr


def test_a_head_that_does_not_build_is_a_failure(clone: dict, tmp_path: Path) -> None:
    out = gate(clone["dir"], "--base", str(clone["parent"]), "--head", str(clone["broken"]), "--out", str(tmp_path),
               "-q", *cell_args())
    assert out.returncode == 1, out.stdout + out.stderr
    assert "FAILED: build head: --head" in out.stdout and "does not build" in out.stdout


def test_a_planted_per_message_loop_fails_naming_the_cell(clone: dict, tmp_path: Path) -> None:
    out = gate(clone["dir"], "--base", str(clone["parent"]), "--head", str(clone["planted"]), "--out", str(tmp_path),
               "-q", *cell_args())
    assert out.returncode == 1, out.stdout + out.stderr
    assert "REGRESSION: deterministic qjs/text_11 instructions/message: base" in out.stdout
    assert "deterministic gate: 1 regressed, 0 improved, 2 unchanged of 3 checked" in out.stdout
    md = next(tmp_path.glob("gate-2*.md")).read_text()
    assert "## wsbench gate: REGRESSION (exit 1)" in md and "| deterministic | qjs/text_11 |" in md


def test_base_equal_to_head_passes_and_the_second_run_is_cached(tmp_path: Path) -> None:
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--", "quickjs-websocket", "clients",
                            "servers", "scripts"], capture_output=True, text=True, timeout=60).stdout
    if dirty.strip():
        pytest.skip("uncommitted changes to the code under test: HEAD is not the working tree")
    for i in range(2):
        out = gate(ROOT, "--base", "HEAD", "--out", str(tmp_path / str(i)), "-q", *cell_args())
        assert out.returncode == 0, out.stdout + out.stderr
        assert "deterministic gate: 0 regressed, 0 improved, 3 unchanged of 3 checked" in out.stdout
    base = report(tmp_path / "1")["environment"]["gate_builds"]["base"]
    assert base["cached"] is True and base["commit"] == git(ROOT, "rev-parse", "HEAD")
