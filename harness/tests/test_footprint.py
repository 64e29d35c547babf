"""The footprint (issue 35, item 5): a qemu-user guest's own resident pages told from the
emulator's (qemu_guest.py), the file sizes and the start-up reading of wsbench footprint
(footprint.py) on stand-ins, a client built outside make setup being n/a until built, and
the report's "Footprint" section (report/footprint.py) on a synthetic run."""

from __future__ import annotations

import shutil
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from wsbench import footprint_measure as footprint, qemu_guest, runner
from wsbench.catalog import Program, load_catalog
from wsbench.model import ArchFootprint, Cell, FileSize, Footprint, MappedFile, ProgramRecord, Run, Sample
from wsbench.report import footprint as report_footprint
from wsbench.report.markdown import table
from wsbench.workloads import load_workloads

GUEST_BASE = 0x1000  # qemu-arm put the guest at 0 here: the block starts at vm.mmap_min_addr


def smaps(entries: list[tuple[int, int, str, int]]) -> str:
    """A /proc/PID/smaps text: (start, end, path, Rss KiB) per mapping."""
    out = []
    for start, end, path, rss in entries:
        out += [f"{start:08x}-{end:08x} rw-p 00000000 00:00 0          {path}".rstrip(),
                f"Size:           {(end - start) // 1024} kB", f"Rss:            {rss} kB", "Pss:            0 kB"]
    return "\n".join(out) + "\n"


GUEST = [(GUEST_BASE, 0x3f1d9000, "", 0), (0x3f1d9000, 0x3f1da000, "/b/arm/lws.so", 4),
         (0x3f1da000, 0x40001000, "", 1200), (0x40001000, 0x40081000, "/b/arm/qjs", 512),
         (0x40081000, 0xffff0000, "", 1500), (0xffff0000, 0x100000000, "", 4)]
HOST = [(0x55740770a000, 0x557407782000, "/usr/bin/qemu-arm", 400),
        (0x557434242000, 0x5574343f3000, "[heap]", 1624), (0x7fc0a8400000, 0x7fc0b03ff000, "", 6144)]


def test_the_guest_is_the_one_block_spanning_a_32_bit_address_space() -> None:
    maps = qemu_guest.parse_smaps(smaps(GUEST + HOST))
    assert [m.rss_kib for m in maps] == [r for *_, r in GUEST + HOST]
    block = qemu_guest.guest_block(maps)
    assert block is not None and sum(m.rss_kib for m in block) == 4 + 1200 + 512 + 1500 + 4
    assert qemu_guest._files(block) == ["/b/arm/lws.so", "/b/arm/qjs"]  # not qemu-arm's own files


def test_no_guest_figure_without_exactly_one_such_block() -> None:
    native = qemu_guest.parse_smaps(smaps(HOST))
    assert qemu_guest.guest_block(native) is None
    gap = [(a, b, p, r) for a, b, p, r in GUEST if a != 0x40081000]  # a hole: no run spans 4 GiB
    assert qemu_guest.guest_block(qemu_guest.parse_smaps(smaps(gap + HOST))) is None
    shifted = [(a + 2 ** 33, b + 2 ** 33, p, r) for a, b, p, r in GUEST]
    assert qemu_guest.guest_block(qemu_guest.parse_smaps(smaps(GUEST + shifted + HOST))) is None


def test_a_native_process_has_no_guest() -> None:
    import os
    assert not qemu_guest.emulated(os.getpid()) and qemu_guest.guest_rss_kib(os.getpid()) is None
    files = qemu_guest.mapped_files(os.getpid())
    assert files is not None and any(Path(f).name.startswith("libc") for f in files)


@pytest.mark.skipif(shutil.which("strip") is None, reason="binutils' strip is not installed")
def test_sizes_as_built_and_stripped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(footprint, "ROOT", tmp_path)
    exe = tmp_path / "prog"
    shutil.copyfile(sys.executable, exe)
    (tmp_path / "module.js").write_text("export const x = 1;\n")
    elf = footprint._size("prog", "prog", "strip", tmp_path / "out")
    assert elf.bytes == exe.stat().st_size and elf.stripped_bytes is not None and elf.stripped_bytes <= elf.bytes
    assert exe.stat().st_size == elf.bytes  # the build itself is left as it is
    js = footprint._size("module.js", "module.js", "strip", tmp_path / "out")
    assert (js.bytes, js.stripped_bytes) == (20, None)


STANDIN = ("import json, sys\n"
           "print(json.dumps({'error': 'missing --url (--kind echo); usage: ...'}), flush=True)\n"
           "sys.stdin.read()\n")


def test_startup_reads_the_client_loaded_and_waiting(tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    script.write_text(STANDIN)
    client = Program("standin", "client", "native", "stand-in", (sys.executable, str(script)))
    reading = footprint.startup(client)
    assert not isinstance(reading, str), reading
    rss, guest, files = reading
    assert rss > 0 and guest is None and any(Path(f).name.startswith("libc") for f in files)


def test_startup_names_a_client_that_does_not_wait(tmp_path: Path) -> None:
    script = tmp_path / "client.py"
    script.write_text("print('hello', flush=True)\n")
    client = Program("standin", "client", "native", "stand-in", (sys.executable, str(script)))
    assert footprint.startup(client) == "client standin: expected its missing --url report at start-up, got 'hello'"


def test_a_client_built_outside_make_setup_is_na_until_built(tmp_path: Path) -> None:
    catalog = load_catalog()
    armhf = catalog.clients["quickjs-armhf"]
    assert armhf.setup == "make setup-arm" and not armhf.default
    gone = replace(armhf, requires=("build/arm/nothing-here/qjs",))
    assert gone.unbuilt() == "is not built (build/arm/nothing-here/qjs is missing; run: make setup-arm)"
    workload = load_workloads().workloads["hold_fp_1000"]
    why = runner.not_applicable(workload, catalog.servers["lws"], gone)
    assert why == "client quickjs-armhf is not built (build/arm/nothing-here/qjs is missing; run: make setup-arm)"
    plain = replace(catalog.clients["quickjs"], requires=("build/nothing-here",))
    assert plain.unbuilt() is None and plain.missing() == ["build/nothing-here"]  # make setup's: a failure
    entry = footprint.measure(replace(catalog, clients={**catalog.clients, "quickjs-armhf": gone}), "armhf", tmp_path)
    assert entry.error == "client quickjs-armhf is not built (build/arm/nothing-here/qjs is missing; run: make setup-arm)"


def test_the_suite_holds_both_clients_over_ws_and_wss() -> None:
    ws = load_workloads()
    suite = ws.suites["footprint"]
    assert suite.tls == "both" and suite.clients == ("quickjs", "quickjs-armhf") and suite.servers == ("lws",)
    assert {ws.workloads[w].params["connections"] for w in suite.workloads} == {1000, 4000}
    assert {ws.workloads[w].kind for w in suite.workloads} == {"idle"}
    assert tuple(spec.client for spec in footprint.ARCHES.values()) == suite.clients


# ------------------------------------------------------------------ the report

KIB = {("quickjs", "ws"): 3.0, ("quickjs", "wss"): 30.0, ("quickjs-armhf", "ws"): 2.5,
       ("quickjs-armhf", "wss"): 27.0}
EMULATOR_KIB = 0.25  # what qemu-arm's own memory adds per connection in the synthetic run


def footprint_run() -> Run:
    workloads = {f"hold_fp_{n}": {"kind": "idle", "params": {"connections": n}} for n in (1000, 4000)}
    cells = []
    for name, spec in workloads.items():
        n = spec["params"]["connections"]
        for server in ("lws", "lws/wss"):
            for client in ("quickjs", "quickjs-armhf"):
                kib = KIB[(client, "wss" if server.endswith("/wss") else "ws")]
                cell = Cell(name, server, client)
                for rep in (1, 2):
                    held = {"client_rss_kib": 5000 + kib * n + rep}
                    if client == "quickjs-armhf":
                        held = {"client_rss_kib": 22000 + (kib + EMULATOR_KIB) * n + rep,
                                "client_guest_rss_kib": 3000 + kib * n - rep}
                    cell.samples.append(Sample(rep=rep, extra={"connections": n, "marks": {"held": held}}))
                cells.append(cell)
    fp = Footprint("what", {
        "x86-64": ArchFootprint("quickjs", ["qjs"], "strip 2.40",
                                [FileSize("qjs", "build/prefix/bin/qjs", 4096 * 1024, 900 * 1024),
                                 FileSize("websocket.js", "build/quickjs-websocket/websocket.js", 21 * 1024, None)],
                                [MappedFile("/usr/lib/x86_64-linux-gnu/libssl.so.3", 672 * 1024, "system", "libssl3 3.0")],
                                [5300, 5400, 5200]),
        "armhf": ArchFootprint("quickjs-armhf", ["qemu-arm"], "arm strip 2.40",
                               [FileSize("qjs", "build/arm/prefix/bin/qjs", 3800 * 1024, 500 * 1024)],
                               [MappedFile("build/arm/sysroot/usr/lib/arm-linux-gnueabihf/libssl.so.3", 420 * 1024,
                                           "sysroot", "libssl3 3.0")],
                               [23000, 22900, 22950], [3280, 3270, 3290])})
    clients = {c: ProgramRecord(c, c.upper(), "quickjs", [c]) for c in ("quickjs", "quickjs-armhf")}
    servers = {s: ProgramRecord(s, s.upper(), "native", [s]) for s in ("lws", "lws/wss")}
    return Run(created="now", command=["wsbench", "footprint"], suite="footprint", repetitions=2, environment={},
               workloads=workloads, servers=servers, clients=clients, cells=cells, footprint=fp)


def test_memory_per_connection_is_the_guests_under_qemu() -> None:
    fits = {(f.client, f.scheme, f.figure): f for f in report_footprint.connection_fits(footprint_run())}
    assert set(fits) == {("quickjs", "ws", "process"), ("quickjs", "wss", "process"),
                         ("quickjs-armhf", "ws", "guest"), ("quickjs-armhf", "wss", "guest"),
                         ("quickjs-armhf", "ws", "process"), ("quickjs-armhf", "wss", "process")}
    for (client, scheme), kib in KIB.items():
        own = fits.get((client, scheme, "guest")) or fits[(client, scheme, "process")]
        assert own.slope_kib == pytest.approx(kib, abs=1e-3) and len(own.points) == 4
    assert fits[("quickjs-armhf", "ws", "process")].slope_kib == pytest.approx(2.5 + EMULATOR_KIB, abs=1e-3)


def test_the_section_sets_the_architectures_side_by_side() -> None:
    [section] = report_footprint.sections(footprint_run())
    assert section.title == "Footprint"
    grids = [b for b in section.blocks if not isinstance(b, str)]
    files, mapped, startup, per_conn = ("\n".join(table(g)) for g in grids)
    assert "| qjs | 4,096.0 | 900.0 | 3,800.0 | 500.0 |" in files
    assert "| websocket.js | 21.0 | – | – | – |" in files
    assert "libssl3 3.0" in mapped and "Debian armhf package in build/arm/sysroot" in mapped
    assert "| x86-64 | QUICKJS | 5,300 | – | **5,300** | 3 |" in startup
    assert "| armhf | QUICKJS-ARMHF | 22,950 | 19,670 | **3,280** | 3 |" in startup
    assert "| armhf | QUICKJS-ARMHF | wss:// | **27.00** | 1.0000 | 27.25 | 4 | 1,000 – 4,000 |" in per_conn
    assert "| x86-64 | QUICKJS | ws:// | **3.00** | 1.0000 | – | 4 | 1,000 – 4,000 |" in per_conn


def test_no_section_in_other_runs() -> None:
    run = footprint_run()
    run.suite, run.footprint = "capacity", None
    assert report_footprint.sections(run) == []
