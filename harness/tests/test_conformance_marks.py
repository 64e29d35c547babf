"""Tables that say when a runtime checks less (issue 31, item 4): each program's conformance
summary in a run (from a `wsbench conformance` results file of the same versions, or the
quick subset at verify time), the ranked tables, CSV and HTML marking the cells of a
program that skips a check, and the report's case-by-case conformance section. The end
to end test runs the test-only lax server (echoes anything, checks nothing) beside node-ws
(strict on both checks) and lws-echo (validates UTF-8, accepts unmasked frames: a limit of
libwebsockets 4.3.5, docs/server-conformance.md)."""

from __future__ import annotations

import csv
import io
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest
from runkit import run_of
from wsbench_runs import ROOT, lax_server_entry, wsbench

from wsbench.checked import quick
from wsbench.checked.origins import differs, parse
from wsbench.errors import WsbenchError
from wsbench.model import CaseRecord, CheckResult, ConformanceSummary, Verdict, read_json, write_json
from wsbench.report import csvfile, printed, run_report
from wsbench.rfc_checks import CLIENT_RULES, MASKING, SERVER_RULES, UTF8, checks

TEXT = {"description": "64-byte text", "kind": "echo", "metric": "msgs_per_s", "params": {"type": "text"}}
BINARY = {"description": "64-byte binary", "kind": "echo", "metric": "msgs_per_s", "params": {"type": "binary"}}


def summary(source: str = "quick", utf8: list[str] | None = None, masking: list[str] | None = None,
            cases: int = 3) -> ConformanceSummary:
    if source == "none":
        return ConformanceSummary("none", "not checked: --conformance off")
    return ConformanceSummary(source, "the quick subset at verify time: 6 cases",
                              [CheckResult(UTF8, "UTF-8 (8.1)", cases, utf8 or []),
                               CheckResult(MASKING, "masking (5.1)", 1, masking or [])])


def marked_run() -> Any:
    run = run_of({("t", "lax", "loadgen"): [900, 910, 920], ("t", "lws", "loadgen"): [500, 510, 520],
                  ("b", "lax", "loadgen"): [900, 910, 920], ("b", "lws", "loadgen"): [500, 510, 520]},
                 {"t": TEXT, "b": BINARY})
    bad = [f"6-invalid-{i}" for i in range(6)]
    run.servers["lax"].conformance = summary(utf8=bad, cases=6)
    run.servers["lws"].conformance = summary()
    run.clients["loadgen"].conformance = summary()
    return run


# --- the checks, one function for both sides

def test_client_verdicts_give_the_same_checks_as_server_verdicts() -> None:
    from wsbench.conformance import cases as client_cases

    records = [CaseRecord.from_json(c.to_json()) for c in client_cases.CASES]
    verdicts = {c.id: Verdict("strict", "") for c in client_cases.CASES}
    verdicts["1-masked-text"] = Verdict("fail", "delivered")
    verdicts["6-invalid-byte-ff"] = Verdict("non-strict", "dropped TCP")
    got = {c.key: c for c in checks(CLIENT_RULES, records, verdicts)}
    assert [c.key for c in got.values()] == [r.key for r in SERVER_RULES]
    assert got[MASKING].let_through == ["1-masked-text"] and not got[MASKING].holds
    assert got[UTF8].holds and got[UTF8].cases >= 8
    assert all(c.cases for c in got.values())


def test_the_quick_subsets_test_utf8_and_masking_without_pauses() -> None:
    assert len(quick.server_subset()) == len(quick.SERVER_CASES)  # every case it names is in its room
    assert len(quick.client_subset()) == len(quick.CLIENT_CASES)
    for cases, rules in ((quick.server_subset(), SERVER_RULES), (quick.client_subset(), CLIENT_RULES)):
        records = [CaseRecord.from_json(c.to_json()) for c in cases]
        got = {c.key: c.cases for c in checks(rules, records, {c.id: Verdict("strict", "") for c in records})}
        assert got[UTF8] >= 3 and got[MASKING] >= 1 and len(cases) <= 10
    assert all(not c.heavy and not c.expect.before_end for c in quick.server_subset())
    assert all(c.script_seconds() == 0 for c in quick.client_subset())


def test_versions_say_what_differs() -> None:
    here = {"command": "x", "runtime": "v1", "lockfiles": {"a": "1"}, "binaries": {"b": "2"}}
    assert differs(here, dict(here)) is None
    assert differs(here, {**here, "runtime": "v0"}) == "runtime 'v0' there, 'v1' here"
    assert differs(here, {**here, "binaries": {"b": "3"}}) == "binaries differ (b)"


def test_bad_conformance_sources_are_one_line(tmp_path: Path) -> None:
    run_file = tmp_path / "run.json"
    write_json(marked_run(), run_file)
    for values, needle in ((["auto", "off"], "at most one of auto, quick, off"),
                           ([str(tmp_path / "nope.json")], "nope.json: file not found"),
                           ([str(run_file)], "not a results file of `wsbench conformance`")):
        with pytest.raises(WsbenchError, match=re.escape(needle)):
            parse(values, tmp_path)
    done = wsbench("run", "--conformance", str(tmp_path / "nope.json"), "--out", str(tmp_path))
    assert done.returncode == 2 and "nope.json: file not found" in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1


# --- the tables

def test_ranked_tables_mark_a_program_that_skips_a_check() -> None:
    run = marked_run()
    text = printed(run)
    t = text.split("## t — ")[1].split("## ")[0]
    assert "| checks |" in t
    lax = next(line for line in t.splitlines() if "| lax label |" in line)
    lws = next(line for line in t.splitlines() if "| lws label |" in line)
    assert lax.endswith("| **server skips UTF-8** [1] |") and lws.endswith("| checked, hold |")
    assert ("[1] server `lax` (lax label) skips UTF-8 (8.1): let through 6 of 6 cases (`6-invalid-0`, "
            "`6-invalid-1`, `6-invalid-2` and 3 more); from the quick subset") in t
    b = text.split("## b — ")[1].split("## ")[0]  # binary: UTF-8 is not what the workload relies on
    assert "skips" not in b and b.count("| checked, hold |") == 2
    assert "## Conformance of the programs" in text


def test_a_program_not_checked_says_so() -> None:
    run = marked_run()
    run.clients["loadgen"].conformance = summary("none")
    t = printed(run).split("## b — ")[1].split("## ")[0]
    assert t.count("| conformance not checked |") == 2


def test_runs_before_summaries_mark_nothing() -> None:
    run = marked_run()
    for record in (*run.servers.values(), *run.clients.values()):
        record.conformance = None
    text = printed(run)
    assert "| checks |" not in text and "Conformance of the programs" not in text
    assert csvfile.cells_csv(run).splitlines()[1].count(",,") >= 1


def test_csv_has_the_skipped_checks_as_columns() -> None:
    rows = list(csv.DictReader(io.StringIO(csvfile.cells_csv(marked_run()))))
    lax_t = next(r for r in rows if r["workload"] == "t" and r["server"] == "lax")
    assert lax_t["conformance"] == "skips"
    assert lax_t["checks_skipped"] == "server lax utf8: " + " ".join(f"6-invalid-{i}" for i in range(6))
    assert {r["conformance"] for r in rows if r["server"] == "lws"} == {"holds"}
    assert {r["conformance"] for r in rows if r["workload"] == "b"} == {"holds"}


def test_a_summary_survives_the_run_file(tmp_path: Path) -> None:
    run = marked_run()
    write_json(run, tmp_path / "r.json")
    again = read_json(tmp_path / "r.json")
    assert again.servers["lax"].conformance == run.servers["lax"].conformance
    assert again == run


# --- end to end: the lax server and lws-echo in one run

BUILT = all((ROOT / p).exists() for p in ("build/bin/lws-echo", "build/bin/wsbench-loadgen",
                                          "node_modules/node20/bin/node", "node_modules/ws/package.json"))


def catalog(tmp_path: Path) -> Path:
    """The harness's catalog, and the lax server beside its servers."""
    path = tmp_path / "runtimes.toml"
    path.write_text("\n".join([(ROOT / "harness/runtimes.toml").read_text(), *lax_server_entry()]))
    return path


@pytest.mark.skipif(not BUILT, reason="lws-echo, wsbench-loadgen or node and ws are not built (make setup)")
def test_a_lax_server_is_marked_and_fails_its_conformance_table(tmp_path: Path) -> None:
    out = tmp_path / "out"
    began = time.monotonic()
    done = wsbench("--catalog", str(catalog(tmp_path)), "run", "-w", "smoke_text", "-s", "lax", "-s", "node-ws",
                   "-s", "lws", "-c", "loadgen", "-n", "1", "--min-seconds", "0", "--out", str(out), timeout=120)
    took = time.monotonic() - began
    assert done.returncode == 0, done.stderr
    assert took < 30, f"the run took {took:.0f} s"
    source = next(out.glob("run-*.json"))
    run = read_json(source)
    lax, ws, lws = (run.servers[s].conformance for s in ("lax", "node-ws", "lws"))
    assert lax is not None and ws is not None and lws is not None
    assert lax.source == ws.source == lws.source == "quick"
    utf8, masking = lax.check(UTF8), lax.check(MASKING)
    assert utf8 is not None and masking is not None
    assert utf8.let_through == [c.id for c in quick.server_subset() if c.id.startswith(("6-", "7-"))]
    assert masking.let_through == [f"1-unmasked-{k}" for k in ("text", "binary", "ping", "close")]
    assert all(c.holds for c in ws.checks if c.checked) and ws.check(UTF8) and ws.check(MASKING)
    assert lws.check(UTF8).holds and lws.check(MASKING).let_through  # type: ignore[union-attr]
    client = run.clients["loadgen"].conformance
    assert client is not None and client.source == "quick" and client.check(UTF8) and client.check(MASKING)
    assert client.check(UTF8).holds and client.check(MASKING).holds  # type: ignore[union-attr]
    assert re.search(r"conformance summaries in \d+\.\d s", done.stderr)

    # the table wsbench run prints: the lax row marked for both checks, lws for masking, node-ws not
    table = done.stdout.split("## smoke_text")[1].split("## ")[0]
    rows = {name: next(line for line in table.splitlines() if f"| {label} |" in line) for name, label in (
        ("lax", "lax echo (checks nothing)"), ("node-ws", "Node 20 + ws"), ("lws", "libwebsockets (C)"))}
    assert "**server skips UTF-8** [" in rows["lax"] and "**server skips masking** [" in rows["lax"]
    assert "UTF-8" not in rows["lws"] and "**server skips masking** [" in rows["lws"]
    assert rows["node-ws"].endswith("| checked, hold |")
    assert re.search(r"- \[\d\] server `lax` \(lax echo \(checks nothing\)\) skips UTF-8 \(8\.1\): let through 6 of 6 "
                     r"cases \(`6-invalid-byte-ff`, `6-invalid-overlong-slash-2-per-byte`, `6-invalid-surrogate-a080` "
                     r"and 3 more\); from the quick subset", table)
    assert re.search(r"- \[\d\] server `lax` .* skips masking \(5\.1\): let through 4 of 4 cases", table)

    # the report: Markdown, CSV and HTML (in Chromium)
    report_dir = tmp_path / "report"
    shown = wsbench("report", str(source), "--format", "md,html,csv", "-o", str(report_dir), "--screenshot")
    assert shown.returncode == 0, shown.stderr
    assert "no console errors" in shown.stderr
    md = (report_dir / "results.md").read_text()
    assert "**server skips UTF-8** [" in md and "## Conformance of the programs" in md
    assert "| `6-invalid-byte-ff` | 8.1 |" in md and "| **6 UTF-8** |" in md
    rows = list(csv.DictReader(io.StringIO((report_dir / "results.csv").read_text())))
    assert {r["conformance"] for r in rows if r["server"] == "lax"} == {"skips"}
    assert "server lax masking: 1-unmasked-text" in next(r for r in rows if r["server"] == "lax")["checks_skipped"]
    page = (report_dir / "index.html").read_text()
    grid = page.split("Servers</strong>, case by case")[1].split("</table>")[0]
    ff = next(row for row in grid.split("<tr>") if "6-invalid-byte-ff" in row)
    assert ff.count('class="tone-failed">F<') == 1 and ff.count('class="tone-ok">S<') == 2  # lax F, the others S
    assert re.search(r'class="tone-failed"><strong>server skips UTF-8</strong> \[\d\]', page)
    # the report of the same run again, from the file alone
    assert run_report(run, source, "md") == md


# --- the summary from a results file of `wsbench conformance`

@pytest.mark.skipif(not BUILT, reason="lws-echo, wsbench-loadgen or node and ws are not built (make setup)")
def test_a_conformance_file_of_the_same_versions_is_the_summary(tmp_path: Path) -> None:
    """`wsbench conformance --servers` first, then a run: its summary is that file's (found
    under --out, or named with --conformance); a file of other versions is passed over, and
    says why."""
    out, cat = tmp_path / "out", str(catalog(tmp_path))
    done = wsbench("--catalog", cat, "conformance", "--servers", "-s", "lax", "--case", "1-unmasked-text",
                   "--case", "6-invalid-byte-ff", "--case", "3-rsv1-text", "--out", str(out), "-q")
    assert done.returncode == 0, done.stderr
    conformance = next(out.glob("server-conformance-*.json"))
    run_args = ["--catalog", cat, "run", "-w", "smoke_text", "-s", "lax", "-c", "loadgen", "-n", "1",
                "--min-seconds", "0"]
    done = wsbench(*run_args, "--out", str(out))
    assert done.returncode == 0, done.stderr
    run = read_json(next(out.glob("run-*.json")))
    lax = run.servers["lax"].conformance
    assert lax is not None and lax.source == "file" and lax.file == str(conformance)
    assert lax.check(UTF8).let_through == ["6-invalid-byte-ff"]  # type: ignore[union-attr]
    assert lax.check(MASKING).let_through == ["1-unmasked-text"]  # type: ignore[union-attr]
    assert lax.check("rsv").let_through == ["3-rsv1-text"]  # type: ignore[union-attr]
    assert run.server_conformance is not None and len(run.server_conformance.cases) == 3
    loadgen = run.clients["loadgen"].conformance  # no client conformance file under --out: the quick subset
    assert loadgen is not None and loadgen.source == "quick"
    table = done.stdout.split("## smoke_text")[1].split("## ")[0]
    assert "**server skips UTF-8** [1]; **server skips masking** [2]" in table
    assert f"from {conformance.name}" in table or f"from {conformance}" in table

    # the same file, named, from another version of the program: passed over, and why
    data = json.loads(conformance.read_text())
    data["environment"]["runtimes"]["python"]["version"] = "Python 0.1"
    other = tmp_path / "other-versions.json"
    other.write_text(json.dumps(data))
    done = wsbench(*run_args, "--conformance", str(other), "--conformance", "off", "--out", str(tmp_path / "o2"))
    assert done.returncode == 0, done.stderr
    lax = read_json(next((tmp_path / "o2").glob("run-*.json"))).servers["lax"].conformance
    assert lax is not None and lax.source == "none"
    assert "runtime 'Python 0.1' there" in lax.note and "conformance not checked" in done.stdout

    # the same file passed over, the quick subset played instead: its note says why the file did not count
    done = wsbench(*run_args, "--conformance", str(other), "--out", str(tmp_path / "o3"))
    assert done.returncode == 0, done.stderr
    lax = read_json(next((tmp_path / "o3").glob("run-*.json"))).servers["lax"].conformance
    assert lax is not None and lax.source == "quick"
    assert "files passed over" in lax.note and "runtime 'Python 0.1' there" in lax.note
