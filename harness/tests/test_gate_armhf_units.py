"""wsbench gate --arch armhf without running QEMU: the plugin's count line read, the marker
shared by the plugin and the checks module, the armhf cells and their machine facts, the
baseline's per-architecture section, and the one-line refusals."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wsbench.errors import WsbenchError
from wsbench.gate import arches, baseline, deterministic, invocation, machine, qemu
from wsbench.gate.callgrind import Count
from wsbench.model import DeterministicBaseline, GateBaseline
from wsbench.paths import ROOT


def test_the_count_line_gives_the_phase_total() -> None:
    line = "wsbench-qemu-count instructions=6553902 phases=1 open=0 all=91234567\n"
    assert qemu.parse(line, "qjs-armhf/text_11") == 6553902


@pytest.mark.parametrize("line, says", [
    ("wsbench-qemu-count instructions=0 phases=0 open=0 all=1566451", "never marked its measured phase"),
    ("wsbench-qemu-count instructions=512 phases=0 open=1 all=9000", "never off"),
    ("wsbench-qemu-count instructions=0 phases=1 open=0 all=9000", "counted no instruction"),
    ("", "not a count line"),
    ("instructions=5", "not a count line"),
])
def test_a_count_line_without_a_closed_phase_fails_naming_the_cell(line: str, says: str) -> None:
    with pytest.raises(WsbenchError, match=f"gate cell qjs-armhf/bin_32: .*{says}"):
        qemu.parse(line, "qjs-armhf/bin_32")


def test_a_missing_count_file_fails_in_one_line(tmp_path: Path) -> None:
    with pytest.raises(WsbenchError, match=r"qjs-armhf/text_11: qemu-arm's plugin wrote no x.qemu-count"):
        qemu.total(tmp_path / "x.qemu-count", "qjs-armhf/text_11")


def test_the_plugin_and_the_checks_module_share_the_marker() -> None:
    """count.c's MARK_A/MARK_B are check.c's COUNT_MARK_A/COUNT_MARK_B."""
    plugin = (ROOT / "scripts/qemu-count/count.c").read_text()
    checks = (ROOT / "clients/quickjs-check/check.c").read_text()
    mine = dict(re.findall(r"#define MARK_([AB]) (0x[0-9a-f]+)u", plugin))
    theirs = dict(re.findall(r"#define COUNT_MARK_([AB]) (0x[0-9a-f]+)u", checks))
    assert mine == theirs and set(mine) == {"A", "B"}


def test_the_armhf_cells_are_the_qjs_cells_with_the_armhf_client() -> None:
    x86 = {c.name: c for c in arches.X86_64.cells if c.program == "qjs"}
    arm = list(arches.ARMHF.cells)
    twins = [(a, x86.get(a.name.replace("qjs-armhf/", "qjs/"))) for a in arm]
    assert all(b is not None and (a.counts, a.warmup, a.tls) == (b.counts, b.warmup, b.tls) for a, b in twins)
    assert {c.name for c in arm} >= {f"qjs-armhf/{w}" for w in ("text_11", "bin_32", "bin_4k", "bin_64k", "frag4_4k",
                                                                 "text_1m", "handshakes", "tls_text_11",
                                                                 "tls_bin_64k")}
    assert "qjs-armhf/tls_handshakes" not in {c.name for c in arm}  # (cells.ARMHF_LEFT_OUT)
    assert arm[0].client_command() == ("build/arm/prefix/bin/qjs", "build/arm/root/clients/quickjs.mjs")
    wrapped = qemu.QEMU.wrap(Path("/tmp/x.qemu-count"))
    assert wrapped[0] == "qemu-arm" and "build/arm/qemu-count/wsbench-count.so,out=/tmp/x.qemu-count" in wrapped


def test_armhf_counts_compare_on_qemus_facts_not_the_host_cpus() -> None:
    here = {"qemu": "qemu-arm version 7.2.22", "plugin_source_sha256": "ab", "arm_cc": "gcc 12",
            "arm_sysroot": "libc6=2.36-9+deb12u14", "cpu_model": "one CPU"}
    elsewhere = {**here, "cpu_model": "another CPU"}
    assert machine.mismatch(elsewhere, here, qemu.KEYS) is None
    assert machine.mismatch(elsewhere, here) is not None  # x86-64's keys
    newer = {**here, "qemu": "qemu-arm version 8.0.0"}
    assert "qemu is 'qemu-arm version 7.2.22' here" in (machine.mismatch(newer, here, qemu.KEYS) or "")


def test_armhf_counts_go_to_their_own_section_of_the_baseline() -> None:
    here = {"qemu": "q", "plugin_source_sha256": "p", "arm_cc": "c", "arm_sysroot": "s"}
    x86 = DeterministicBaseline({"cpu_model": "x"}, 0.03, 0.03, {})
    previous = baseline.updated(None, ["wsbench", "gate"], {}, x86, None, None)
    assert isinstance(previous.gate, GateBaseline) and previous.gate.arches == {}
    section = deterministic.section({"qjs-armhf/text_11": Count("qjs-armhf/text_11", 3_233_600, 1000)}, "quick",
                                    None, here, qemu.KEYS)
    new = baseline.updated(previous, ["wsbench", "gate"], {}, section, None, None, "armhf")
    assert baseline.deterministic(new) is x86
    armhf = baseline.deterministic(new, "armhf")
    assert armhf is not None and armhf.counts["quick"]["qjs-armhf/text_11"].per_message == 3233.6


def test_armhf_without_setup_arm_is_refused_in_one_line_naming_it(monkeypatch: pytest.MonkeyPatch,
                                                                  tmp_path: Path) -> None:
    monkeypatch.setattr(qemu, "ROOT", tmp_path)  # no build/arm there
    with pytest.raises(WsbenchError, match=r"^--arch armhf: .* is missing \(run: make setup-arm\)$"):
        invocation._arch(invocation.Options(baseline=tmp_path / "gate.json", arch="armhf"))



def test_an_armhf_module_older_than_its_sources_is_refused(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A source changed after make setup-arm: the counts would be the old code's."""
    import os
    monkeypatch.setattr(qemu, "ROOT", tmp_path)
    module = tmp_path / qemu.MODULE
    module.parent.mkdir(parents=True)
    module.write_bytes(b"")
    (tmp_path / "quickjs-websocket/src").mkdir(parents=True)
    (tmp_path / "wsproto").mkdir()
    for rel in ("quickjs-websocket/src/tp_tls.c", "quickjs-websocket/src/tls_bio.h", "wsproto/wsproto.h"):
        (tmp_path / rel).write_text("")
        os.utime(tmp_path / rel, (1000, 1000))
    assert qemu.stale() is None
    os.utime(tmp_path / "quickjs-websocket/src/tp_tls.c", None)  # now: after the module
    os.utime(module, (2000, 2000))
    assert qemu.stale() == (f"{qemu.MODULE} is older than quickjs-websocket/src/tp_tls.c (run: make setup-arm)")
    os.utime(tmp_path / "wsproto/wsproto.h", None)
    assert qemu.stale() == (f"{qemu.MODULE} is older than quickjs-websocket/src/tp_tls.c and 1 more "
                            "(run: make setup-arm)")

@pytest.mark.parametrize("opts, says", [
    ({"only": "wall"}, "--arch armhf has no wall gate"),
    ({"base": "HEAD~1"}, "no --base"),
])
def test_armhf_refuses_what_it_cannot_measure(opts: dict, says: str, tmp_path: Path) -> None:
    with pytest.raises(WsbenchError, match=says):
        invocation._arch(invocation.Options(baseline=tmp_path / "gate.json", arch="armhf", **opts))


def test_an_unknown_architecture_is_named() -> None:
    with pytest.raises(WsbenchError, match="unknown architecture 'mips'"):
        arches.get("mips")
