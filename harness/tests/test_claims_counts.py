"""The claims table's instruction columns (wsbench count --claims, the run's counts section):
per architecture, instructions per message without the optimization over with it, beside the
msgs/s ratio; and which cells wsbench count counts for the claims."""

from __future__ import annotations

from wsbench.catalog import load_catalog
from wsbench.commands.count import claim_targets
from wsbench.doc import Grid
from wsbench.gate.tally import counts_for
from wsbench.model import ArchCounts, CellCount, InstructionCounts
from wsbench.report import claims, sources
from wsbench.workloads import load_workloads

from runkit import run_of


def counted(tool: str, per_message: dict[str, float]) -> ArchCounts:
    return ArchCounts(tool, {"qemu": "qemu-arm version 7.2.22"} if "qemu" in tool else {"cpu_model": "cpu"}, "quick",
                      {k: CellCount(int(v * 100), 100, v) for k, v in per_message.items()})


def test_each_architecture_gets_a_column_of_instruction_ratios() -> None:
    run = run_of({("frag2_4k", "lws", "quickjs"): [9000.0], ("frag2_4k", "lws", "quickjs-no-join"): [3000.0]})
    run.counts = InstructionCounts({
        "armhf": counted("qemu-arm + wsbench-count.so", {"frag2_4k/lws/quickjs": 10484.5,
                                                         "frag2_4k/lws/quickjs-no-join": 39985.9}),
        "x86-64": counted("callgrind", {"frag2_4k/lws/quickjs": 7000.0, "frag2_4k/lws/quickjs-no-join": 21000.0})})
    grid = claims.claims_grid(run, sources.SINGLE_CLAIMS)
    assert grid.headers[6:8] == ["instructions/message ratio, x86-64 (callgrind)",
                                 "instructions/message ratio, armhf (qemu-arm + wsbench-count.so)"]
    row = grid.rows[0]  # claim 1, join, frag2_4k
    assert row[5].startswith("3.00×")  # msgs/s: 9,000 over 3,000
    assert row[6] == "3.00× (frag2_4k: 21,000 → 7,000)" and row[7] == "3.81× (frag2_4k: 39,986 → 10,484)"
    timers = next(r for c, r in zip(sources.SINGLE_CLAIMS, grid.rows) if c.unmeasurable and not c.workloads)
    assert timers[6] == timers[7] == "–"
    pool = next(r for c, r in zip(sources.SINGLE_CLAIMS, grid.rows) if c.switch == "pool")
    assert pool[6] == "not counted"
    section = claims.quickjs_section(run)
    assert any(isinstance(b, str) and "counts, not times" in b for b in section.blocks)


def test_without_counts_the_table_is_as_before() -> None:
    run = run_of({("text_11", "lws", "quickjs"): [100.0]})
    grid = claims.claims_grid(run, sources.ALL_CLAIMS)
    assert isinstance(grid, Grid) and not any("instructions" in h for h in grid.headers)
    assert not any(isinstance(b, str) and "counts, not times" in b for b in claims.quickjs_section(run).blocks)


def test_the_claims_cells_are_each_claims_workload_with_and_without_its_optimization() -> None:
    workloads = load_workloads()
    targets = {t.key: dict(t.env) for t in claim_targets(load_catalog(), workloads)}
    assert targets["frag2_4k/lws/quickjs"] == {}
    assert targets["frag2_4k/lws/quickjs-no-join"] == {"QJSWS_DISABLE": "join"}
    assert targets["text_11/lws/quickjs-baseline"] == {"QJSWS_DISABLE": "all"}
    assert not any(k.startswith("buffered_") for k in targets)  # a getter rate, not per message
    assert counts_for(workloads, "bin_64k") == (50, 10) and counts_for(workloads, "handshakes") == (100, 10)
