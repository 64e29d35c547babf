"""Profiling's pieces on known input: the frame classification and its 100 % breakdown,
Bun's jitdump as a perf map, .cpuprofile as folded stacks, the profiled variants of the
catalog's programs, and the schema-4 results (older versions still read)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from wsbench.catalog import load_catalog
from wsbench.profile import breakdown, cell, classify, cpuprofile, jitdump, stacks, variants, views
from wsbench.report.markdown import section_lines
from wsbench.model import OverheadRuns, Profiles, Run, Startup, read_json, write_json
from wsbench.model.schema import SCHEMA_VERSION

SCRIPT = """\
node 100/100 1.0:     1001001 cpu-clock:
\tffffffff81000001 tcp_sendmsg+0x10 ([kernel.kallsyms])
\t    7f0000000001 __libc_send+0x1 (/usr/lib/x86_64-linux-gnu/libc.so.6)

node 100/100 1.1:     1001001 cpu-clock:
\t    7f0000000002 malloc+0x2 (/usr/bin/node)
\t    7f0000000003 v8::internal::Execution::Call+0x3 (/usr/bin/node)

node 100/100 1.2:     1001001 cpu-clock:
\t    7f0000000004 JS:*startRound file:///x/clients/workload/echo.js:163:24+0x4 (/tmp/perf-100.map)

node 100/100 1.3:     1001001 cpu-clock:
\t    7f0000000005 Builtin:CallFunction+0x5 (/tmp/perf-100.map)

node 100/100 1.4:     1001001 cpu-clock:
\t    7f0000000006 v8::internal::Scavenger::ScavengeObject+0x6 (/usr/bin/node)

qjs 200/200 1.5:     1001001 cpu-clock:
\t    7f0000000007 lws_service_fd+0x7 (/x/build/profile/prefix/lib/libwebsockets.so.19)

qjs 200/200 1.6:     1001001 cpu-clock:
\t    7f0000000008 own_read+0x8 (/x/build/profile/root/build/quickjs-websocket/lws.so)

qjs 200/200 1.7:     1001001 cpu-clock:
\t    7f0000000009 [unknown] ([unknown])

bun 300/300 1.8:     1001001 cpu-clock:
\t    7f000000000a JSC-FTL: rxText#DXTbrh+0xa (/tmp/perf-300.map)

bun 300/300 1.9:     1001001 cpu-clock:
\t    7f000000000b CRYPTO_memcmp+0xb (/usr/lib/x86_64-linux-gnu/libcrypto.so.3)
"""


def test_samples_are_parsed_leaf_first(tmp_path: Path) -> None:
    (tmp_path / "s.txt").write_text(SCRIPT)
    got = list(stacks.read(tmp_path / "s.txt"))
    assert len(got) == 10
    assert got[0].leaf == stacks.Frame("tcp_sendmsg", "[kernel.kallsyms]")
    assert got[0].frames[1].symbol == "__libc_send"
    assert got[2].leaf.symbol == "JS:*startRound file:///x/clients/workload/echo.js:163:24"


def test_every_category_by_its_rule() -> None:
    got = [classify.classify(s.leaf) for s in stacks.samples(SCRIPT.splitlines())]
    assert got == [classify.KERNEL, classify.LIBC, classify.JS, classify.ENGINE, classify.GC, classify.LWS,
                   classify.OURS, classify.UNKNOWN, classify.JS, classify.TLS]
    for dso in ("/x/build/bin/lws-echo", "/x/build/profile/bin/wsbench-loadgen",
                "/x/build/profile/root/build/clients/wsbench_check.so"):
        assert classify.classify(stacks.Frame("f", dso)) == classify.OURS
    assert classify.classify(stacks.Frame("JS_CallInternal", "/x/build/profile/prefix/bin/qjs")) == classify.ENGINE
    assert classify.classify(stacks.Frame("gc_decref", "/x/build/profile/prefix/bin/qjs")) == classify.GC
    assert classify.classify(stacks.Frame("[unknown]", "/x/node_modules/@oven/bun-linux-x64/bin/bun")) == classify.ENGINE
    assert classify.classify(stacks.Frame("JSC-Thunk: DefaultCall", "/tmp/perf-1.map")) == classify.ENGINE
    assert classify.classify(stacks.Frame("__memmove_avx_unaligned", "[vdso]")) == classify.LIBC
    assert classify.classify(stacks.Frame("f", "/x/libz.so.1")) == classify.OTHER


def test_tls_and_crypto_by_library_and_by_symbol_in_a_runtime() -> None:
    """The system's OpenSSL by its files; what a runtime links in (Node's OpenSSL, rustls and
    ring where not stripped, k6's Go crypto) by symbol, the rest of those binaries (and the
    stripped ones: Bun, Deno) staying the engine's."""
    expected = {("ossl_gcm_ghash_4bit", "/usr/lib/x86_64-linux-gnu/libcrypto.so.3"): classify.TLS,
                ("SSL_read", "/usr/lib/x86_64-linux-gnu/libssl.so.3"): classify.TLS,
                ("aesni_gcm_encrypt", "/x/node_modules/node/bin/node"): classify.TLS,
                ("ecp_nistz256_ord_sqr_mont", "/x/node_modules/node/bin/node"): classify.TLS,
                ("fe_mul", "/x/node_modules/node/bin/node"): classify.TLS,
                ("ossl_fnv1a_hash", "/x/node_modules/node/bin/node"): classify.TLS,
                ("Builtins_LoadIC", "/x/node_modules/node/bin/node"): classify.ENGINE,
                ("[unknown]", "/x/node_modules/deno/deno"): classify.ENGINE,
                ("ring_core_0_17_14__aes_gcm_enc_update_vaes_avx2", "/x/node_modules/deno/deno"): classify.TLS,
                ("<rustls::conn::ConnectionCommon<T>>::process_new_packets", "/x/deno"): classify.TLS,
                ("crypto/internal/fips140/aes/gcm.gcmAesEnc", "/x/build/tools/k6/k6"): classify.TLS,
                ("v8::internal::Execution::Call", "/x/node_modules/node/bin/node"): classify.ENGINE,
                ("tokio::runtime::task::raw::poll", "/x/deno"): classify.ENGINE}
    assert {k: classify.classify(stacks.Frame(*k)) for k in expected} == expected


def test_k6_frames_go_to_the_runtime_its_collector_and_its_allocator() -> None:
    """k6 is one Go binary: its modules, sobek and the Go runtime are the engine; Go's GC
    and allocator are told apart by symbol (the send-queue profile's memmove is k6's own)."""
    k6 = "/x/build/tools/k6/k6"
    expected = {"runtime.memmove": classify.ENGINE, "runtime.selectgo": classify.ENGINE,
                "go.k6.io/k6/internal/js/modules/k6/websockets.(*webSocket).writePump": classify.ENGINE,
                "github.com/grafana/sobek.(*vm).run": classify.ENGINE, "runtime.gcBgMarkWorker": classify.GC,
                "runtime.scanobject": classify.GC, "runtime.tryDeferToSpanScan": classify.GC,
                "runtime.bulkBarrierPreWrite": classify.GC, "runtime.mallocgcSmallScanNoHeader": classify.LIBC,
                "runtime.(*mheap).alloc": classify.LIBC}
    assert {sym: classify.classify(stacks.Frame(sym, k6)) for sym in expected} == expected
    assert classify.classify(stacks.Frame("runtime.memmove", "/usr/bin/other-go-program")) == classify.OTHER


def test_breakdown_sums_to_100_and_ranks_self_frames() -> None:
    b = breakdown.build(stacks.samples((SCRIPT + SCRIPT.split("\n\n")[0] + "\n").splitlines()))
    shares = b.shares()
    assert set(shares) == set(classify.CATEGORIES)
    assert sum(shares.values()) == pytest.approx(100.0)
    assert b.samples == 11
    top = b.top()
    assert top[0][0] == "tcp_sendmsg ([kernel.kallsyms])" and top[0][2] == 2
    assert len(top) == 10
    data = b.record()
    assert sum(data.shares.values()) == pytest.approx(100.0)
    assert breakdown.shares_grid(data.shares).rows[-1] == ["total", "100.0 %"]


def test_empty_breakdown_is_all_zero() -> None:
    assert sum(breakdown.build([]).shares().values()) == 0


def _jitdump(path: Path, pid: int, records: list[tuple[int, int, str]], cut: int = 0) -> None:
    out = struct.pack("<IIIIIIQQ", jitdump.MAGIC, 1, 40, 62, 0, pid, 0, 0)
    for addr, size, name in records:
        body = struct.pack("<IIQQQQ", pid, pid + 1, addr, addr, size, 0) + name.encode() + b"\0" + b"\x90" * size
        out += struct.pack("<IIQ", 0, 16 + len(body), 0) + body
    # a record of another kind (JIT_CODE_CLOSE, id 3) is skipped
    out += struct.pack("<IIQ", 3, 16, 0)
    path.write_bytes(out[:len(out) - cut] if cut else out)


def test_jitdump_to_perf_map(tmp_path: Path) -> None:
    _jitdump(tmp_path / "jit-4243-4242.dump", 4242, [(0x7F0000001000, 0x40, "JSC-Baseline: startRound#AqWwp0"),
                                                     (0x7F0000002000, 0x80, "JSC-FTL: rxText#DXTbrh")])
    path, n = jitdump.write_perf_map(tmp_path, 4242, tmp_path)
    assert n == 2 and path == tmp_path / "perf-4242.map"
    assert path.read_text().splitlines() == ["7f0000001000 40 JSC-Baseline: startRound#AqWwp0",
                                             "7f0000002000 80 JSC-FTL: rxText#DXTbrh"]
    assert jitdump.write_perf_map(tmp_path, 999, tmp_path) == (None, 0)


def test_jitdump_cut_short_keeps_whole_records(tmp_path: Path) -> None:
    _jitdump(tmp_path / "jit-1-7.dump", 7, [(0x1000, 0x10, "a"), (0x2000, 0x10, "b")], cut=30)
    _pid, loads = jitdump.read(tmp_path / "jit-1-7.dump")
    assert [c.name for c in loads] == ["a"]


def test_jitdump_rejects_other_files(tmp_path: Path) -> None:
    (tmp_path / "x.dump").write_bytes(b"\x7fELF" + b"\0" * 60)
    with pytest.raises(jitdump.JitdumpError, match="not a jitdump"):
        jitdump.read(tmp_path / "x.dump")


def test_cpuprofile_folds_by_sample() -> None:
    profile = {"nodes": [
        {"id": 1, "callFrame": {"functionName": "(root)", "url": "", "lineNumber": -1}, "children": [2]},
        {"id": 2, "callFrame": {"functionName": "main", "url": "file:///x/clients/workload/main.js", "lineNumber": 9},
         "children": [3, 4]},
        {"id": 3, "callFrame": {"functionName": "startRound", "url": "file:///x/clients/workload/echo.js",
                                "lineNumber": 162}},
        {"id": 4, "callFrame": {"functionName": "", "url": "", "lineNumber": -1}}],
        "samples": [3, 3, 4, 2], "timeDeltas": [1, 1, 1, 1]}
    assert cpuprofile.folded(profile) == ["main main.js:10 1", "main main.js:10;(anonymous) 1",
                                          "main main.js:10;startRound echo.js:163 2"]
    with pytest.raises(cpuprofile.CpuProfileError):
        cpuprofile.folded({"samples": []})


def test_variants_name_jit_code_and_use_the_profiling_build(tmp_path: Path) -> None:
    catalog = load_catalog()
    node = variants.for_perf(catalog.clients["node-ws"], tmp_path, tmp_path / "v8.log")
    assert node.program.command[:5] == ("node_modules/node20/bin/node", "--perf-basic-prof",
                                        "--interpreted-frames-native-stack", "--no-logfile-per-isolate",
                                        f"--logfile={tmp_path / 'v8.log'}")
    deno = variants.for_perf(catalog.clients["deno"], tmp_path)
    assert deno.program.command[1:3] == ("run", "--v8-flags=--perf-basic-prof,--interpreted-frames-native-stack,"
                                                "--no-logfile-per-isolate,--logfile=" + str(tmp_path / "v8.log"))
    bun = variants.for_perf(catalog.clients["bun"], tmp_path)
    assert bun.program.env["BUN_JSC_useJITDump"] == "1" and bun.jit.method == "jitdump"
    assert bun.program.env["BUN_JSC_jitDumpDirectory"] == str(tmp_path)
    qjs = variants.for_perf(catalog.clients["quickjs-baseline"], tmp_path)
    assert qjs.program.command == ("build/profile/prefix/bin/qjs", "build/profile/root/clients/quickjs.mjs")
    assert qjs.program.env == {"QJSWS_DISABLE": "all"}
    assert "build/profile/root/build/quickjs-websocket/lws.so" in qjs.program.requires
    assert variants.for_perf(catalog.servers["lws"], tmp_path).program.command == ("build/profile/bin/lws-echo",)
    prof = variants.for_cpu_prof(catalog.clients["deno"], tmp_path)
    assert prof is not None and prof.command[2:4] == ("--cpu-prof", f"--cpu-prof-dir={tmp_path}")
    assert variants.for_cpu_prof(catalog.clients["quickjs"], tmp_path) is None


ENTRY = {"workload": "text_11", "server": "lws", "client": "quickjs", "sides": ["client"], "dir": "profiles/x",
         "files": {"client_svg": "profiles/x/client.svg"}, "notes": [], "frequency_hz": 999, "error": None,
         "unprofiled": {"msgs_per_s": 100.0}, "profiled": {"msgs_per_s": 90.0}, "overhead": 0.1,
         "overhead_runs": {"unprofiled": [100.0], "profiled": [90.0]},
         "breakdown": {"client": breakdown.build(stacks.samples(SCRIPT.splitlines())).record().to_json()}}
STARTUP = {"what": "w", "tool": "hyperfine 1.15.0", "warmup": 1, "runs": 2, "servers": {},
           "clients": {"quickjs": {"mean_s": 0.01, "stddev_s": 0.001, "median_s": 0.01, "min_s": 0.009,
                                   "max_s": 0.011, "runs": 2, "peak_rss_kib": 4096, "error": None},
                       "bun": {"mean_s": 0.02, "stddev_s": 0.001, "median_s": 0.02, "min_s": 0.019,
                               "max_s": 0.021, "runs": 2, "peak_rss_kib": 40960, "error": None}}}


def profiles() -> Profiles:
    return Profiles.from_json({"dir": "profiles/x", "cells": [ENTRY]})


def test_profile_sections_round_trip_and_older_versions(tmp_path: Path) -> None:
    run = Run(created="t", command=["wsbench", "profile"], suite=None, repetitions=1, environment={},
              workloads={}, servers={}, clients={}, cells=[], settings={"profiled": True},
              profiles=profiles(), startup=Startup.from_json(STARTUP))
    write_json(run, tmp_path / "p.json")
    data = json.loads((tmp_path / "p.json").read_text())
    assert data["schema_version"] == SCHEMA_VERSION
    assert data["startup"] == STARTUP and data["profiles"]["cells"][0]["breakdown"] == ENTRY["breakdown"]
    back = read_json(tmp_path / "p.json")
    assert back.profiles == run.profiles and back.startup == run.startup and back.cells == []
    data["schema_version"] = 3
    del data["profiles"], data["startup"]
    (tmp_path / "old.json").write_text(json.dumps(data))
    old = read_json(tmp_path / "old.json")
    assert old.profiles is None and old.startup is None


def test_rendered_tables() -> None:
    sections = views.sections(profiles(), Startup.from_json(STARTUP))
    text = "\n".join(line for s in sections for line in section_lines(s))
    assert "| 1 | client | quickjs | 10.0 | 1.0 | 10.0 |" in text
    assert "| 2 | client | bun | 20.0 |" in text and "2.00×" in text
    assert "| text_11 | lws | quickjs | client | 10 |" in text
    assert "overhead 10.0 %" in text and "total | 100.0 %" in text


def test_overhead_compares_medians_of_alternating_runs() -> None:
    assert cell.overhead(OverheadRuns([100.0, 300.0, 200.0], [180.0, 90.0, 270.0])) == pytest.approx(0.1)
    assert cell.overhead(OverheadRuns([100.0], [])) is None


def test_report_renders_a_profiled_run(tmp_path: Path) -> None:
    from wsbench import report

    run = Run(created="t", command=["wsbench", "profile"], suite=None, repetitions=1, environment={},
              workloads={"text_11": {"description": "d", "kind": "echo", "metric": "msgs_per_s"}}, servers={},
              clients={}, cells=[], settings={"profiled": True},
              profiles=profiles(), startup=Startup.from_json(STARTUP))
    write_json(run, tmp_path / "profile-x.json")
    text = report.run_report(read_json(tmp_path / "profile-x.json"), tmp_path / "profile-x.json", "md")
    assert "Where the time goes (profiles)" in text and "Start-up (hyperfine)" in text
    assert "QuickJS scoreboard" not in text  # a profiled run is never ranked
