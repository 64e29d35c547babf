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


def test_the_workflow_runs_make_test_then_the_gate_against_the_base_and_keeps_a_history() -> None:
    text = WORKFLOW.read_text()
    assert "pull_request:" in text and "schedule:" in text
    assert "run: bash .ci/run" in text
    pr = text[text.index("  test:"):text.index("  gate:")]
    # after make test: the gate against the pull request's base, its verdict in the job summary,
    # the base's build cached by the base commit (restored before, saved even when the gate fails)
    assert pr.index("bash .ci/run") < pr.index('wsbench gate --base "$BASE_SHA" --summary "$GITHUB_STEP_SUMMARY"')
    assert "BASE_SHA: ${{ github.event.pull_request.base.sha }}" in pr and "fetch-depth: 0" in pr
    assert "actions/cache/restore@v4" in pr and "actions/cache/save@v4" in pr
    assert pr.count("build/base/${{ github.event.pull_request.base.sha }}") == 2
    nightly = text[text.index("  gate:"):]
    assert "wsbench gate --base" in nightly and "wsbench history build/history/runs -o build/history --screenshot" \
        in nightly and "git -C build/history push" in nightly and "contents: write" in nightly
    assert text.count("actions/upload-artifact@v4") == 2
