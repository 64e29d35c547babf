"""The HTML report of a small run in headless Chromium: no console errors, every chart
drawn with a size, a screenshot saved next to the report."""

from __future__ import annotations

import re
from pathlib import Path

from runkit import run_of
from wsbench_runs import FIXTURES, wsbench

from wsbench.model import read_json, write_json

LATENCY = {"description": "32-byte round trips", "kind": "latency", "metric": "latency_p99_us"}


def test_html_report_renders_in_chromium(tmp_path: Path) -> None:
    run = read_json(FIXTURES / "run-quick-trimmed.json")  # a real quick run, trimmed
    latency = run_of({("latency_32", "lws", "quickjs"): [80, 85, 90], ("latency_32", "lws", "bun"): [120, 125, 130]},
                     {"latency_32": LATENCY})  # and a latency workload, for the percentile chart
    run.workloads.update(latency.workloads)
    run.cells += latency.cells
    source = tmp_path / "run-20260101-000000.json"
    write_json(run, source)
    out = tmp_path / "latest"
    result = wsbench("report", str(source), "--format", "md,html,csv", "-o", str(out), "--screenshot")
    assert result.returncode == 0, result.stderr
    assert "no console errors" in result.stderr
    page = (out / "index.html").read_text()
    assert re.search(r"<(script|link)\b[^>]*\b(src|href)=\"https?:", page) is None  # nothing from the network
    charts = page.count("<figure>")
    assert charts == 3 * 3 + 1  # per workload: bars, CPU, RSS; one percentile chart for latency_32
    assert f"{charts} charts" in result.stderr  # each of them measured with a size in Chromium
    assert (out / "screenshot.png").stat().st_size > 10_000
    assert (out / "results.md").read_text().startswith("# wsbench results")
    assert (out / "results.csv").read_text().startswith("workload,server,client")
