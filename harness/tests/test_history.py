"""wsbench history: the trend page over real gate reports (fixtures/history/, README
there), checked in headless Chromium like the report: no console error, no request, charts
with a size; the cells the gate named are marked; one line and exit 2 for a directory
without results."""

from __future__ import annotations

import re
from pathlib import Path

from wsbench_runs import FIXTURES, wsbench

HISTORY = FIXTURES / "history"


def test_the_page_renders_and_passes_the_chromium_check(tmp_path: Path) -> None:
    out = wsbench("history", str(HISTORY), "-o", str(tmp_path), "--screenshot")
    assert out.returncode == 0, out.stderr
    assert "4 charts, no console errors, 4 commits" in out.stderr
    page = (tmp_path / "index.html").read_text()
    assert "<script" not in page and "<link" not in page and "url(http" not in page  # nothing from the network
    assert not re.search(r'(src|href)="(https?:)?//', page)
    for text in ("<h2>Commits</h2>", "<h2>Instruction counts</h2>", "<h2>Wall clock</h2>", "be02ffc97c26",
                 "deterministic qjs/text_11, deterministic qjs/bin_32", "<strong>REGRESSION</strong>",
                 "qjs: instructions per message per commit",
                 "text_11: msgs/s per client and the gated ratios, per commit"):
        assert text in page, text
    assert page.count("<svg") == 4 and (tmp_path / "screenshot.png").stat().st_size > 10_000


def test_the_newest_commit_is_the_next_base() -> None:
    out = wsbench("history", str(HISTORY), "--last-commit")
    assert out.returncode == 0 and out.stdout.strip() == "ebc0e61cd0deb88e7646fb67f3d9466956b7ceec"


def test_a_directory_without_results_is_one_line(tmp_path: Path) -> None:
    out = wsbench("history", str(tmp_path))
    assert out.returncode == 2 and out.stderr.strip() == f"wsbench: error: {tmp_path}: no results file (*.json) in it"
