"""Memory per connection with permessage-deflate (issue 32): the idle kind's `warm` parameter
as the workloads declare it and the client is given it, the capacity fit grouped by program,
compression and warmth over a run with the deflate axis, and the report's "Memory per
connection with compression" (report/deflate_memory.py), absent from a run without the data."""

from __future__ import annotations

import pytest

from wsbench.doc import Grid
from wsbench.model import Cell, ProgramRecord, Run, Sample
from wsbench.report.capacity import memory_fits, sections as capacity_sections
from wsbench.report.deflate_memory import rows, sections
from wsbench.report.markdown import table
from wsbench.workloads import load_workloads

# KiB per connection of each (program, compressed, warm): what the synthetic run is built from
SERVER_KIB = {("lws", False, False): 5.0, ("lws", False, True): 6.0, ("lws", True, False): 5.5,
              ("lws", True, True): 70.0, ("bun", False, False): 1.5, ("bun", True, False): 40.0,
              ("bun", False, True): 2.0, ("bun", True, True): 41.0}
CLIENT_KIB = {("qjs", False, False): 3.0, ("qjs", False, True): 3.5, ("qjs", True, False): 3.2,
              ("qjs", True, True): 68.0, ("loadgen", False, False): 0.8, ("loadgen", False, True): 0.9,
              ("loadgen", True, False): 0.8, ("loadgen", True, True): 66.0}


def _sample(rep: int, n: int, server_kib: float, client_kib: float) -> Sample:
    return Sample(rep=rep, messages=n, seconds=2.0, extra={
        "connections": n, "marks": {"held": {"server_rss_kib": server_kib, "client_rss_kib": client_kib}}})


def deflate_run() -> Run:
    """A deflate_memory run in small: idle_N (loadgen driving lws, bun and their twins) and
    hold_N (qjs and loadgen against lws and lws/deflate), each cold and warm, at 100 and 400
    connections, 2 repetitions; every figure a line through SERVER_KIB and CLIENT_KIB."""
    workloads = {}
    cells = []
    for warm in (False, True):
        for n in (100, 400):
            for scope in ("idle", "hold"):
                name = f"{scope}{'_warm' if warm else ''}_{n}"
                workloads[name] = {"kind": "idle", "params": {"connections": n, "hold_ms": 10,
                                                              **({"warm": True} if warm else {})}}
                pairs = ([(s, "loadgen") for s in ("lws", "lws/deflate", "bun", "bun/deflate")] if scope == "idle"
                         else [(s, c) for s in ("lws", "lws/deflate") for c in ("qjs", "loadgen")])
                for server, client in pairs:
                    packed = server.endswith("/deflate")
                    base = server.removesuffix("/deflate")
                    cell = Cell(name, server, client)
                    cell.samples = [_sample(r, n, 4000 + SERVER_KIB[(base, packed, warm)] * n + r,
                                            9000 + CLIENT_KIB[(client, packed, warm)] * n - r) for r in (1, 2)]
                    cells.append(cell)
    servers = {s: ProgramRecord(s, s.upper(), "native" if s.startswith("lws") else "bun", [s],
                                deflate={"args": ["--deflate"]} if s.endswith("/deflate") else None)
               for s in ("lws", "lws/deflate", "bun", "bun/deflate")}
    clients = {c: ProgramRecord(c, c.upper(), "native", [c]) for c in ("qjs", "loadgen")}
    return Run(created="now", command=["wsbench"], suite="deflate_memory", repetitions=2, environment={},
               workloads=workloads, servers=servers, clients=clients, cells=cells,
               settings={"deflate": {"mode": "both"}})


def test_the_workloads_declare_warm_and_the_client_is_given_it() -> None:
    ws = load_workloads()
    for name in ("idle_warm_1000", "idle_warm_4000", "hold_warm_1000", "hold_warm_4000"):
        assert ws.workloads[name].params["warm"] is True and "--warm" in ws.workloads[name].client_args()
    assert "warm" not in ws.workloads["hold_1000"].params and "--warm" not in ws.workloads["hold_1000"].client_args()
    suite = ws.suites["deflate_memory"]
    assert suite.deflate == "both" and suite.repetitions == 2
    assert {ws.workloads[w].params.get("warm", False) for w in suite.workloads} == {False, True}
    assert {ws.workloads[w].params["connections"] for w in suite.workloads} == {1000, 4000}


def test_the_fit_is_one_line_per_program_compression_and_warmth() -> None:
    fits = {(f.side, f.name, f.compressed, f.warm): f for f in memory_fits(deflate_run())}
    assert len(fits) == 16  # 4 server twins x warm or not; 2 clients x (against lws or lws/deflate) x warm or not
    for (program, packed, warm), kib in SERVER_KIB.items():
        f = fits[("server", program + ("/deflate" if packed else ""), packed, warm)]
        assert f.slope_kib == pytest.approx(kib, abs=0.01) and f.r2 == pytest.approx(1.0, abs=1e-3)
        # 2 sizes x 2 repetitions, nothing of the other kinds; lws's from idle_N and hold_N (loadgen drives it in both)
        assert len(f.points) == (8 if program == "lws" else 4) and f.program == program
    for (client, packed, warm), kib in CLIENT_KIB.items():
        f = fits[("client", client, packed, warm)]
        assert f.slope_kib == pytest.approx(kib, abs=0.01) and len(f.points) == (8 if client == "loadgen" else 4)
    assert fits[("client", "qjs", True, True)].held_as == "after traffic, deflate"
    assert fits[("server", "bun", False, False)].held_as == "idle, no deflate"


def test_the_capacity_table_labels_each_kind_of_connection() -> None:
    text = "\n".join(line for s in capacity_sections(deflate_run()) for b in s.blocks
                     for line in (table(b) if isinstance(b, Grid) else [str(b)]))
    assert "| server | LWS/DEFLATE | after traffic, deflate | 70.00 |" in text
    assert "| client | QJS | idle, no deflate | 3.00 |" in text
    assert "| client | QJS | after traffic, deflate | 68.00 |" in text


def test_the_memory_table_sets_each_program_with_and_without_deflate_side_by_side() -> None:
    run = deflate_run()
    assert [(side, program) for side, program, _ in rows(run)] == [
        ("server", "bun"), ("server", "lws"), ("client", "loadgen"), ("client", "qjs")]
    [section] = sections(run)
    assert section.title == "Memory per connection with compression"
    lines = table(next(b for b in section.blocks if isinstance(b, Grid)))
    assert lines[0].startswith("| side | program | no deflate, idle: KiB/conn (R²) | no deflate, after traffic")
    assert "| server | LWS | 5.00 (1.000) | 6.00 (1.000) | 5.50 (1.000) | 70.00 (1.000) | 100 – 400 |" in lines
    assert "| client | QJS | 3.00 (1.000) | 3.50 (1.000) | 3.20 (1.000) | 68.00 (1.000) | 100 – 400 |" in lines


def test_no_memory_table_without_compressed_connections() -> None:
    run = deflate_run()
    run.cells = [c for c in run.cells if not c.server.endswith("/deflate")]
    assert memory_fits(run) and rows(run) == [] and sections(run) == []
    capacity = "\n".join(line for s in capacity_sections(run) for b in s.blocks
                         for line in (table(b) if isinstance(b, Grid) else [str(b)]))
    assert "| client | QJS | after traffic, no deflate | 3.50 |" in capacity
