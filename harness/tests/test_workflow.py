"""The GitHub Actions workflow is valid (actionlint, pinned, built from the Go module proxy
on first use by scripts/setup-actionlint.sh) and wires the commands the README names."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from wsbench_runs import ROOT

WORKFLOW = ROOT / ".github" / "workflows" / "bench.yml"
SETUP = ROOT / "scripts" / "setup-actionlint.sh"


@pytest.fixture(scope="module")
def actionlint() -> str:
    """Build (or find) the pinned actionlint once for this module. The binary is where the
    script says it puts it (build/tools/actionlint-<VERSION>/); the path it prints, when it
    prints one, must be that one (a CI run once saw it exit 0 with nothing on stdout)."""
    setup = subprocess.run([str(SETUP)], cwd=ROOT, capture_output=True, text=True, timeout=900,
                           stdin=subprocess.DEVNULL)
    assert setup.returncode == 0, setup.stderr
    version = re.search(r"^VERSION=(\S+)$", SETUP.read_text(), re.M)
    assert version, "setup-actionlint.sh names no VERSION"
    binary = ROOT / "build" / "tools" / f"actionlint-{version.group(1)}" / "actionlint"
    assert binary.is_file(), f"{binary} missing after setup; stdout {setup.stdout!r} stderr {setup.stderr!r}"
    printed = setup.stdout.strip().splitlines()
    assert not printed or Path(printed[-1]) == binary, printed
    return str(binary)


def test_actionlint_accepts_the_workflow(actionlint: str) -> None:
    out = subprocess.run([actionlint, "-no-color", str(WORKFLOW)], cwd=ROOT, capture_output=True, text=True,
                         timeout=120, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, out.stdout + out.stderr


def test_actionlint_catches_a_broken_workflow(actionlint: str, tmp_path) -> None:
    broken = tmp_path / "broken.yml"
    broken.write_text(WORKFLOW.read_text().replace("runs-on: ubuntu-latest", "runs-on: [", 1))
    out = subprocess.run([actionlint, "-no-color", str(broken)], capture_output=True, text=True, timeout=120,
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
