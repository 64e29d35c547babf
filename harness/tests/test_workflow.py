"""The GitHub Actions workflow is valid (actionlint, pinned, built from the Go module proxy
on first use by scripts/setup-actionlint.sh) and wires the commands the README names."""

from __future__ import annotations

import subprocess

from wsbench_testkit import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "bench.yml"


def test_actionlint_accepts_the_workflow() -> None:
    setup = subprocess.run([str(ROOT / "scripts" / "setup-actionlint.sh")], cwd=ROOT, capture_output=True,
                           text=True, timeout=900, stdin=subprocess.DEVNULL)
    assert setup.returncode == 0, setup.stderr
    binary = setup.stdout.strip().splitlines()[-1]
    out = subprocess.run([binary, "-no-color", str(WORKFLOW)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout + out.stderr


def test_actionlint_catches_a_broken_workflow(tmp_path) -> None:
    setup = subprocess.run([str(ROOT / "scripts" / "setup-actionlint.sh")], cwd=ROOT, capture_output=True,
                           text=True, timeout=900, stdin=subprocess.DEVNULL)
    binary = setup.stdout.strip().splitlines()[-1]
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on: ubuntu-latest", "runs-on: [", 1))
    out = subprocess.run([binary, "-no-color", str(broken)], capture_output=True, text=True, timeout=120,
                         stdin=subprocess.DEVNULL)
    assert out.returncode == 1 and "broken.yml" in out.stdout


def test_the_workflow_runs_make_test_on_pull_requests_and_make_gate_on_a_schedule() -> None:
    text = WORKFLOW.read_text()
    assert "pull_request:" in text and "schedule:" in text
    assert "run: bash .ci/run" in text and "make gate" in text
    assert text.count("actions/upload-artifact@v4") == 2
