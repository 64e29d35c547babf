"""wsbench report: the scoreboard, scores, efficiency, claims, CSV, and bad input."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest
from runkit import run_of
from wsbench_runs import FIXTURES, wsbench

from wsbench.report import claims, csvfile, derived, run_report, sources
from wsbench.report.markdown import section_lines
from wsbench.model import read_json

QUICK = FIXTURES / "run-quick-trimmed.json"


def test_markdown_report_of_a_real_quick_run() -> None:
    text = run_report(read_json(QUICK), QUICK, "md")
    headings = [line for line in text.splitlines() if line.startswith("## ")]
    assert headings[0] == "## QuickJS scoreboard" and headings[1] == "## Overall scores"
    assert "## text_11 — 11-byte text messages, 50,000 in one burst" in headings
    assert any(h.startswith("## Claims: the ten quickjs-websocket") for h in headings)
    assert "| 1 | wsbench-loadgen (C) | libwebsockets (C) |" in text and "| 1.00× |" in text
    board = text.split("## QuickJS scoreboard")[1].split("## Overall")[0]
    assert board.count("| libwebsockets (C) |") == 2  # one line per workload, on the native server
    assert "not in this run" in text  # no ablations in a quick run


def test_scoreboard_puts_losses_first_and_ignores_other_servers() -> None:
    run = run_of({
        ("win", "lws", "quickjs"): [200, 201, 202], ("win", "lws", "bun"): [100, 101, 102],
        ("lose", "lws", "quickjs"): [50, 51, 52], ("lose", "lws", "bun"): [100, 101, 102],
        ("lose", "lws", "quickjs-baseline"): [25, 26, 27], ("lose", "lws", "loadgen"): [500, 501, 502],
        ("lose", "deno", "quickjs"): [1, 1, 1],
    })
    lines = derived.scoreboard(run)
    assert [ln.workload for ln in lines] == ["lose", "win"]
    lose = lines[0]
    assert lose.loses and lose.server == "lws" and (lose.rank, lose.of) == (3, 4)
    assert lose.best_jit and lose.best_jit.client == "bun" and lose.best_jit.advantage == pytest.approx(0.505, 0.01)
    assert lose.native and lose.native.advantage == pytest.approx(51 / 501)
    assert lose.baseline and lose.baseline.advantage == pytest.approx(51 / 26)
    assert "**loses**" in run_report(run, Path("x.json"), "md")


def test_json_report_carries_the_figures_as_numbers() -> None:
    data = json.loads(run_report(read_json(QUICK), QUICK, "json"))
    assert {ln["workload"] for ln in data["scoreboard"]} == {"text_11", "bin_64k"}
    assert data["scores"]["client"][0]["geomean"] >= 1.0
    assert data["sections"][0]["title"] == "QuickJS scoreboard"


def test_scores_are_geometric_means_of_factors_against_the_same_server() -> None:
    run = run_of({("a", "lws", "quickjs"): [100] * 3, ("a", "lws", "bun"): [50] * 3,
                  ("b", "lws", "quickjs"): [10] * 3, ("b", "lws", "bun"): [40] * 3,
                  ("a", "deno", "bun"): [1] * 3})  # alone on its server: no factor
    by_name = {s.name: s for s in derived.scores(run, "client")}
    assert by_name["quickjs"].geomean == pytest.approx(2.0) and by_name["quickjs"].groups == 2
    assert by_name["bun"].geomean == pytest.approx(2 ** 0.5) and by_name["bun"].worst == pytest.approx(2.0)


def test_efficiency_is_messages_per_cpu_second_and_per_mib() -> None:
    run = run_of({("a", "lws", "quickjs"): [1000] * 3})
    (row,) = derived.efficiency(run, "a")
    assert row.per_core == pytest.approx(10_000 / 0.75)
    assert row.per_mib == pytest.approx(100)  # 1000 msgs/s over 10 MiB


def test_what_each_client_can_drive_against_the_native_server() -> None:
    """The load tester's section: every client against the native server, fastest first,
    with its CPU per message and both sides' CPU shares; a client bound by its own CPU says
    so in the ranked tables too, with the server's share meanwhile."""
    run = run_of({("a", "lws", "loadgen"): [40_000] * 3, ("a", "lws", "k6"): [10_000] * 3,
                  ("a", "bun", "k6"): [5_000] * 3})
    for cell in run.cells:  # k6 keeps its core busy; lws idles meanwhile
        for s in cell.samples:
            s.client_cpu_s = s.seconds * (0.98 if cell.client == "k6" else 0.6)
            s.server_cpu_s = s.seconds * 0.12
    rows = derived.drive(run, "a")
    assert [(d.cell.client, d.rate, d.of_best) for d in rows] == [("loadgen", 40_000, 1.0), ("k6", 10_000, 0.25)]
    k6 = rows[1]
    assert k6.client_us_per_msg == pytest.approx(98.0) and k6.client_share == pytest.approx(0.98)
    assert k6.server_share == pytest.approx(0.12) and k6.bound == "client" and rows[0].bound == ""
    text = run_report(run, Path("x.json"), "md")
    section = text.split("## What each client can drive")[1].split("\n## ")[0]
    assert "| k6 label | 10,000 | 25% | 98.00 | 0.98 | 0.12 | client |" in section
    assert "k6 label drove 25% of the rate of loadgen label (4.0× fewer msgs/s), the server at 12% of a core" in section
    assert "| client: 98% vs server 12% |" in text.split("## a")[1]  # the ranked table's bound column
    assert "What each client can drive" in run_report(run, Path("x.json"), "html")
    titles = [s["title"] for s in json.loads(run_report(run, Path("x.json"), "json"))["sections"]]
    assert "What each client can drive" in titles
    assert derived.drive(run_of({("a", "bun", "k6"): [1.0] * 3}), "a") == []  # no native server: no section


def ablation(ratio_by_switch: dict[str, tuple[str, list[float]]]) -> dict[tuple[str, str, str], list[float]]:
    cells: dict[tuple[str, str, str], list[float]] = {}
    for switch, (workload, theirs) in ratio_by_switch.items():
        cells[(workload, "lws", "quickjs")] = [100, 101, 99, 100, 102]
        cells[(workload, "lws", f"quickjs-no-{switch}")] = theirs
    return cells


def test_claim_verdicts_from_synthetic_ablations() -> None:
    run = run_of(ablation({
        "pool": ("bin_32", [52, 53, 51, 52, 54]),  # ~1.9x, claimed 1.88: confirmed
        "scheduler": ("text_11", [99, 100, 101, 100, 98]),  # ~1.0, claimed 1.24: refuted
        "fragbuf": ("frag2_4k", [40, 90, 60, 100, 70]),  # wide: undecided
    }))
    def judged(switch: str, workload: str | None) -> str:
        claim = next(c for c in sources.SINGLE_CLAIMS
                     if c.switch == switch and (workload in c.workloads if workload else not c.workloads))
        found = claims.measure(run, claim)
        return claims.verdict(claim.ratio, found[1] if found else None, claim.unmeasurable)[0]

    assert judged("pool", "bin_32") == "confirmed"
    assert judged("scheduler", "text_11") == "refuted"
    assert judged("fragbuf", "frag2_4k") == "not measurable here"  # the interval is too wide
    assert judged("fragbuf", "frag4_4k") == claims.MISSING
    assert judged("scheduler", None) == "not measurable here"  # wsbench counts no timers


def test_verdict_rules() -> None:
    assert claims.verdict(2.0, (1.6, 1.5, 1.7))[0] == "confirmed"  # at least half the gain (1.5)
    assert claims.verdict(2.0, (1.5, 1.3, 1.7))[0] == "not measurable here"
    assert claims.verdict(2.0, (1.2, 1.1, 1.4))[0] == "refuted"
    assert claims.verdict(1.0, (1.0, 0.95, 1.05))[0] == "confirmed"
    assert claims.verdict(1.0, (1.5, 1.4, 1.6))[0] == "refuted"
    assert claims.verdict(1.3, None)[0] == claims.MISSING


def test_source_sections_show_published_figures_beside_ours() -> None:
    run = run_of({("text_11", "deno", "deno"): [120_000] * 3, ("text_11", "deno", "node22"): [60_000] * 3,
                  ("text_16m", "lws", "quickjs"): [90.0] * 3},
                 {"text_16m": {"description": "", "kind": "request", "metric": "delivery_ms"}})
    text = "\n".join(line for s in claims.sections(run) for line in section_lines(s))
    assert "| text_11 | published | Deno | 111,128 | 81,646 | 153,162 | 1.36× | 0.73× |" in text
    assert "| text_11 | wsbench | deno label | 120,000 | 60,000 | not in this run | 2.00× | – |" in text
    assert "| bin_32 | wsbench | deno label | not in this run | not in this run | not in this run | – | – |" in text
    assert "| quickjs label | lws label | 90.0 |" in text and "| 0.32× | 0.24× |" in text
    assert "| 200 | 458,241 | 454,980 | 0.99× |" in text


def test_csv_has_a_row_per_cell_and_metric_with_the_repetitions() -> None:
    run = run_of({("a", "lws", "quickjs"): [100, 200, 300]})
    rows = list(csv.DictReader(io.StringIO(csvfile.cells_csv(run))))
    rate = next(r for r in rows if r["metric"] == "msgs_per_s")
    assert [float(rate[k]) for k in ("rep_1", "rep_2", "rep_3", "median")] == [100, 200, 300, 200]
    assert {r["metric"] for r in rows} >= {"msgs_per_s", "client_cpu_us_per_msg", "client_peak_rss_mib"}


def test_old_runs_and_verify_both_runs_render() -> None:
    old = FIXTURES / "run-schema1-trimmed.json"
    assert "## QuickJS scoreboard" in run_report(read_json(old), old, "md")
    assert "schema 1 run" in run_report(read_json(old), old, "md")
    both = FIXTURES / "run-verify-both-trimmed.json"
    text = run_report(read_json(both), both, "md")
    assert "## Cost of the echo checks" in text
    assert "(echoes unchecked)" not in text.split("## Overall scores")[1].split("## text_11")[0]


@pytest.mark.parametrize("args, culprit", [
    (["report", "missing.json"], "missing.json: file not found"),
    (["report", "harness/tests/fixtures/client.py"], "client.py: not JSON"),
    (["report", str(QUICK), "--format", "pdf"], "unknown format 'pdf'"),
    (["report", str(QUICK), "-f", "md,csv"], "several formats need -o DIR"),
])
def test_bad_input_is_one_line(args: list[str], culprit: str) -> None:
    result = wsbench(*args)
    assert result.returncode == 2 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and culprit in result.stderr and "Traceback" not in result.stderr


def test_unknown_schema_and_malformed_values_are_one_line(tmp_path: Path) -> None:
    old = tmp_path / "old.json"
    old.write_text('{"schema": "wsbench-run", "schema_version": 0}')
    bad = tmp_path / "bad.json"
    bad.write_text(QUICK.read_text().replace('"msgs_per_s":', '"msgs_per_s":"fast","x":', 1))
    typed = tmp_path / "typed.json"
    typed.write_text(QUICK.read_text().replace('"workloads":{', '"workloads":["x"],"w":{', 1))
    for path, culprit in ((old, "schema version 0 is not supported"), (bad, "malformed run file"),
                          (typed, "malformed run file")):
        result = wsbench("report", str(path))
        assert result.returncode == 2 and culprit in result.stderr and result.stderr.count("\n") == 1, result.stderr


def test_every_format_renders_through_one_interface() -> None:
    """The registry's formats, each an exporter of the same document; an unknown one is
    one line naming it and the known ones."""
    from wsbench.errors import WsbenchError
    from wsbench.report.export import REGISTRY, exporter

    run = read_json(QUICK)
    for name in REGISTRY:
        assert run_report(run, QUICK, name).strip()
        assert callable(exporter(name).render)
    with pytest.raises(WsbenchError, match=r"^unknown format 'pdf' \(known: md, html, csv, json\)$"):
        exporter("pdf")
    with pytest.raises(WsbenchError, match=r"^unknown format 'csv' \(known: md, html\)$"):
        exporter("csv", ("md", "html"))
