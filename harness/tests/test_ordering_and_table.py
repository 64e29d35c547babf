from collections import Counter

from wsbench.model import Cell, ProgramRecord, Run, Sample
from wsbench.runner import interleaved
from wsbench.report import printed
from wsbench.report.ranked import bound_side, rank


def cells(n: int) -> list[Cell]:
    return [Cell("w", f"s{i}", "c") for i in range(n)]


def test_every_cell_runs_once_per_repetition_in_rotated_order() -> None:
    cs = cells(6)
    order = interleaved(cs, 3)
    assert Counter(c.key for _, c in order) == {c.key: 3 for c in cs}
    firsts = [order[i * 6][1].key for i in range(3)]
    assert len(set(firsts)) == 3  # each repetition starts somewhere else
    assert [rep for rep, _ in order] == [1] * 6 + [2] * 6 + [3] * 6


def with_rates(cell: Cell, rates: list[float]) -> Cell:
    for i, r in enumerate(rates):
        cell.samples.append(Sample(rep=i + 1, messages=1000, bytes=1000, seconds=1000 / r,
                                   msgs_per_s=r, mb_per_s=r / 1e6, errors=0,
                                   client_cpu_s=0.5, server_cpu_s=0.25,
                                   client_peak_rss_kib=10240, server_peak_rss_kib=20480))
    return cell


def test_overlapping_intervals_share_a_rank() -> None:
    a = with_rates(Cell("w", "s", "a"), [100, 101, 102, 100, 101])
    b = with_rates(Cell("w", "s", "b"), [99, 101, 103, 100, 102])  # overlaps a
    c = with_rates(Cell("w", "s", "c"), [50, 51, 52, 50, 51])      # clearly slower
    ranks = {cell.client: r for r, cell in rank([c, b, a])}
    assert ranks["a"] == ranks["b"] == 1
    assert ranks["c"] == 3


def run_with(cells: list[Cell]) -> Run:
    rec = {n: ProgramRecord(n, n.upper(), "rt", [n]) for n in ("s", "a", "b")}
    return Run(created="now", command=["wsbench"], suite="quick", repetitions=3,
               environment={"cpu_model": "cpu", "logical_cpus": 2, "kernel": "k", "os": "os",
                            "runtimes": {"rt": {"label": "RT", "version": "1.0"}}},
               workloads={"w": {"description": "a workload"}},
               servers={"s": rec["s"]}, clients={"a": rec["a"], "b": rec["b"]}, cells=cells)


def test_table_shows_per_message_cpu_rss_and_failures() -> None:
    good = with_rates(Cell("w", "s", "a"), [1000, 1000, 1000])
    bad = Cell("w", "s", "b")
    bad.samples.append(Sample(rep=1, error="client 'b' vs server 's' on 'w': crashed"))
    text = printed(run_with([good, bad]))
    row = next(line for line in text.splitlines() if line.startswith("| 1 |"))
    assert "| A | S | 1,000 |" in row
    assert "| 500.00 | 250.00 | 10.0 | 20.0 |" in row  # µs/msg client, server; RSS MiB
    assert "failed: client 'b' vs server 's' on 'w': crashed" in text
    assert "## Problems" in text and "rt: 1.0" in text


def test_high_spread_is_flagged() -> None:
    noisy = with_rates(Cell("w", "s", "a"), [100, 200, 300])
    assert "⚠" in printed(run_with([noisy]))


def test_lower_is_better_metrics_rank_ascending() -> None:
    fast = with_rates(Cell("w", "s", "a"), [100, 100, 100])
    slow = with_rates(Cell("w", "s", "b"), [50, 50, 50])
    # CPU µs per message: 'a' does 1000 msgs at 0.5 s each rep, 'b' the same: tie.
    ranks = {cell.client: r for r, cell in rank([slow, fast], "client_cpu_us_per_msg")}
    assert ranks == {"a": 1, "b": 1}
    slow.samples = [Sample(rep=1, messages=1000, seconds=1, msgs_per_s=1000, client_cpu_s=2.0)] * 3
    order = [cell.client for _, cell in rank([slow, fast], "client_cpu_us_per_msg")]
    assert order == ["a", "b"]


def test_the_saturated_side_is_named() -> None:
    cell = Cell("w", "s", "a")
    cell.samples = [Sample(rep=1, messages=1000, seconds=1.0, msgs_per_s=1000,
                           client_cpu_s=0.97, server_cpu_s=0.30)] * 3
    assert bound_side(cell) == "client"
    cell.samples = [Sample(rep=1, messages=1000, seconds=1.0, msgs_per_s=1000,
                           client_cpu_s=0.5, server_cpu_s=0.95)] * 3
    assert bound_side(cell) == "server"


def test_an_empty_histogram_is_no_figure_not_a_measured_zero() -> None:
    """A latency cell whose repetitions timed nothing (count 0): no p99, "n/a" in its
    table, and nothing for the ranking or its factor to use."""
    from wsbench.histogram import Histogram
    from wsbench.metrics import METRICS
    from wsbench.model import Cell, Sample
    from runkit import run_of

    run = run_of({("lat", "lws", "timed"): [120.0, 130.0, 125.0]},
                 {"lat": {"description": "lat", "kind": "latency", "metric": "latency_p99_us"}})
    empty = Cell("lat", "lws", "silent")
    empty.samples = [Sample(rep=r, messages=0, bytes=0, seconds=1.0, msgs_per_s=0.0, mb_per_s=0.0, errors=0,
                            extra={"latency_us": Histogram(31.25, 7, False).summary()}) for r in (1, 2, 3)]
    run.cells.append(empty)
    run.clients["silent"] = run.clients["timed"].__class__("silent", "silent label", "other", ["silent"])
    assert METRICS["latency_p99_us"].get(empty.samples[0]) is None and empty.summary("latency_p99_us") is None
    text = printed(run)
    assert "n/a: no p99 µs in any repetition (nothing was timed)" in text
    assert "| 0.0 |" not in text.split("## lat", 1)[1].split("##", 1)[0]
