"""Merge only what adds (merge.py): each figure declares how shards combine. A close code
is shared, not summed; a repetition one shard lacks and an identity the shards disagree
on fail the merge in one line naming them; a figure without a rule is left out, saying
so; --shard and --cluster refuse the kinds whose ranking figure does not merge."""

from __future__ import annotations

import copy
import subprocess
import sys

import pytest

from wsbench import merge
from wsbench.errors import WsbenchError
from wsbench.model import Cell, ProgramRecord, Run, Sample

from wsbench_runs import ROOT


def shard(i: int, n: int, kind: str, extras: list[dict], reps: int | None = None) -> Run:
    """Shard i of n: one cell of a ``kind`` workload, a repetition per item of ``extras``."""
    cell = Cell("w", "s", "c")
    cell.samples = [Sample(rep=r, messages=100, bytes=100, seconds=1.0 + i, msgs_per_s=100.0, mb_per_s=0.0001,
                           errors=0, client_cpu_s=0.1, client_cpu_method="clock", client_peak_rss_kib=1000 * i,
                           exit_code=0, wall_s=2.0, extra=dict(e)) for r, e in enumerate(extras, 1)]
    return Run(created="t", command=["wsbench"], suite=None, repetitions=reps or len(extras),
               environment={}, workloads={"w": {"kind": kind, "metric": "msgs_per_s"}},
               servers={"s": ProgramRecord("s", "S", "native", ["s"])},
               clients={"c": ProgramRecord("c", "C", "native", ["c"])},
               cells=[cell], complete=True, settings={"min_seconds": 1.0, "shard": [i, n]})


REQUEST = {"delivery_ms": 3.5, "close_code": 1009, "close_reason": "too big", "error_event": True}


def test_a_request_workload_merges_its_shared_close_code_not_the_sum() -> None:
    a = shard(1, 2, "request", [REQUEST, REQUEST])
    b = shard(2, 2, "request", [{**REQUEST, "delivery_ms": 9.0}] * 2)
    merged = merge.merge_shards([("a.json", a), ("b.json", b)], ["wsbench", "merge"])
    sample = merged.cells[0].samples[0]
    assert sample.extra["close_code"] == 1009 and sample.extra["close_reason"] == "too big"
    assert sample.messages == 200 and sample.msgs_per_s == 200.0  # the load adds up
    assert sample.seconds == 3.0 and sample.client_peak_rss_kib == 2000  # the longest phase, the largest process
    assert "delivery_ms" not in sample.extra  # medians per client do not add: each shard file keeps its own


def test_shards_that_disagree_on_an_identity_do_not_merge() -> None:
    a = shard(1, 2, "request", [REQUEST])
    b = shard(2, 2, "request", [{**REQUEST, "close_code": 1000}])
    with pytest.raises(WsbenchError, match=r"^w/s/c repetition 1: the shards disagree on close_code \(1009, 1000\)"):
        merge.merge_shards([("a.json", a), ("b.json", b)], [])


def test_loadgen_tls_counts_add_and_its_identity_must_agree() -> None:
    tls = {"version": "TLSv1.3", "cipher": "TLS_AES_256_GCM_SHA384", "group": "x25519", "library": "OpenSSL 3.0.19",
           "handshakes": 3, "resumed": 1}
    a, b = shard(1, 2, "echo", [{"tls": tls}]), shard(2, 2, "echo", [{"tls": {**tls, "handshakes": 5}}])
    merged = merge.merge_shards([("a", a), ("b", b)], [])
    assert merged.cells[0].samples[0].extra["tls"] == {**tls, "handshakes": 8, "resumed": 2}
    c = shard(2, 2, "echo", [{"tls": {**tls, "library": "OpenSSL 3.5.8"}}])
    with pytest.raises(WsbenchError, match="the shards disagree on tls"):
        merge.merge_shards([("a", a), ("c", c)], [])


def test_a_repetition_missing_from_one_shard_fails_the_merge_naming_it() -> None:
    a = shard(1, 2, "echo", [{"rounds": 1}] * 3)
    b = shard(2, 2, "echo", [{"rounds": 1}] * 2, reps=3)
    with pytest.raises(WsbenchError, match=r"^shard 2 \(b\.json\) has no repetition 3 of w/s/c, which the other "
                                           r"shards have"):
        merge.merge_shards([("a.json", a), ("b.json", b)], [])
    # a repetition no shard has yet (a run still going) is left out, not a failure
    assert len(merge.merge_shards([("a.json", shard(1, 2, "echo", [{}], reps=3)),
                                   ("b.json", shard(2, 2, "echo", [{}], reps=3))], []).cells[0].samples) == 1


def test_a_figure_without_a_rule_is_not_added_blindly() -> None:
    a, b = shard(1, 2, "echo", [{"widgets": 3}]), shard(2, 2, "echo", [{"widgets": 4}])
    [sample] = merge.merge_shards([("a", a), ("b", b)], []).cells[0].samples
    assert "widgets" not in sample.extra and sample.ok
    assert any(e.startswith("widgets: no merge rule") for e in sample.reading_errors)


def test_every_figure_a_client_reports_has_a_rule() -> None:
    """The figures the clients document (clients/README.md's kinds) and the harness adds."""
    for key in ("rounds", "checked", "compared", "rate", "achieved_rate", "sent", "send_lag_us", "latency_hist",
                "latency_us", "getter_calls_per_s", "pending_bytes", "drain_ms", "delivery_ms", "close_code",
                "handshakes_per_s", "tls", "ws", "marks", "limits", "server_tls", "connections", "opens_per_s"):
        assert key in merge.EXTRA_RULES, key


@pytest.mark.parametrize("workload, kind", [("text_16m", "request"), ("idle_1000", "idle")])
def test_sharding_refuses_the_kinds_that_do_not_merge_in_one_line(workload: str, kind: str) -> None:
    proc = subprocess.run([sys.executable, "-m", "wsbench", "run", "-w", workload, "--shard", "1/2",
                           "--target", "ws://127.0.0.1:9/"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
    assert f"workload '{workload}' is a {kind} workload" in proc.stderr and "--shard does not run it" in proc.stderr
    cluster = subprocess.run([sys.executable, "-m", "wsbench", "run", "-w", workload, "--cluster", "local:2",
                              "--target", "ws://127.0.0.1:9/", "-c", "loadgen"], cwd=ROOT, capture_output=True,
                             text=True, timeout=60)
    assert cluster.returncode == 2 and "--cluster does not run it" in cluster.stderr, cluster.stderr


def test_a_merge_leaves_the_shards_untouched() -> None:
    a = shard(1, 2, "echo", [{"rounds": 2}])
    b = shard(2, 2, "echo", [{"rounds": 3}])
    before = copy.deepcopy((a.to_json(), b.to_json()))
    assert merge.merge_shards([("a", a), ("b", b)], []).cells[0].samples[0].extra["rounds"] == 5
    assert (a.to_json(), b.to_json()) == before
