"""Histograms that merge (issue 26): the sum of two shards' histograms is exactly the
histogram of their union, percentiles included; ``wsbench merge`` and the cluster run share
one merge (merge.merge_shards), which merges latency workloads through their histograms."""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from wsbench import histogram, merge
from wsbench.errors import WsbenchError
from wsbench.histogram import Histogram
from wsbench.model import Cell, ProgramRecord, Run, Sample

from wsbench_runs import ROOT

LOADGEN = (1, 7, True)  # unit_ns, sub_bits, integer values: clients/loadgen/histogram.c
WORKLOAD_JS = (31.25, 7, False)  # clients/workload/histogram.js: 1/32 µs, floored
QS = [i / 1000 for i in range(1, 1001)] + [0.5, 0.9, 0.99, 0.999, 0.9999]


def _hist(layout: tuple[float, int, bool], values: list[float]) -> Histogram:
    h = Histogram(*layout)
    for v in values:
        h.record(v)
    return h


def _values(rng: random.Random, n: int, integer: bool) -> list[float]:
    """Latencies of several shapes: a body, a long tail, a few stalls, exact duplicates."""
    out: list[float] = []
    for _ in range(n):
        shape = rng.random()
        v = (rng.lognormvariate(10.5, 0.3) if shape < 0.9 else rng.paretovariate(1.2) * 40_000
             if shape < 0.99 else rng.uniform(1e6, 5e8))
        out.append(float(int(v)) if integer else int(v * 32) / 32 + rng.random() / 64)
    return out


@pytest.mark.parametrize("layout", [LOADGEN, WORKLOAD_JS], ids=["loadgen", "workload-js"])
@pytest.mark.parametrize("seed", range(6))
def test_the_sum_of_two_shards_histograms_is_the_histogram_of_their_union(layout, seed) -> None:
    rng = random.Random(seed)
    a = _values(rng, rng.randint(1, 4000), layout[2])
    b = _values(rng, rng.randint(1, 4000), layout[2]) if seed else a[:]  # seed 0: two identical shards
    ha, hb, union = _hist(layout, a), _hist(layout, b), _hist(layout, a + b)
    merged = histogram.add([ha, hb])
    assert merged.buckets == union.buckets
    assert (merged.count, merged.min, merged.max) == (union.count, union.min, union.max)
    assert merged.sum == pytest.approx(union.sum, rel=1e-12)  # exact for whole nanoseconds; JS sums floats
    assert [merged.quantile_us(q) for q in QS] == [union.quantile_us(q) for q in QS]
    assert merged.summary() == union.summary()
    # and through the run file's sparse form, both ways round
    again = histogram.add([Histogram.from_json(json.loads(json.dumps(hb.to_json()))),
                           Histogram.from_json(json.loads(json.dumps(ha.to_json())))])
    assert again.to_json()["buckets"] == union.to_json()["buckets"] and again.summary() == union.summary()


def test_the_percentile_is_the_clients_definition_not_an_average() -> None:
    fast, slow = _hist(LOADGEN, [10_000.0] * 99), _hist(LOADGEN, [1_000_000.0] * 99)
    merged = histogram.add([fast, slow])
    p50, p90 = merged.summary()["p50"], merged.summary()["p90"]
    assert p50 == pytest.approx(10, rel=0.004) and p90 == pytest.approx(1000, rel=0.004)  # not (10 + 1000) / 2
    assert histogram.add([fast, _hist(LOADGEN, [])]).summary() == fast.summary()  # an empty shard adds nothing


def test_histograms_of_different_layouts_are_refused() -> None:
    with pytest.raises(WsbenchError, match="different layouts"):
        histogram.add([_hist(LOADGEN, [1000.0]), _hist(WORKLOAD_JS, [32.0])])
    with pytest.raises(WsbenchError, match="its count says"):
        Histogram.from_json({**_hist(LOADGEN, [1.0, 2.0]).to_json(), "count": 3})


def _latency_run(shard: int, samples: list[Sample]) -> Run:
    cell = Cell("lat", "target", "loadgen", samples=samples)
    return Run(created="t", command=["wsbench"], suite=None, repetitions=len(samples), environment={},
               workloads={"lat": {"kind": "latency"}},
               servers={"target": ProgramRecord("target", "t", "external", ["ws://127.0.0.1:1/"])},
               clients={"loadgen": ProgramRecord("loadgen", "l", "native", ["x"])}, cells=[cell],
               complete=True, settings={"shard": [shard, 2], "min_seconds": 0})


def _sample(rep: int, values: list[float], cpu: float) -> Sample:
    h = _hist(LOADGEN, values)
    return Sample(rep=rep, messages=h.count, bytes=32 * h.count, seconds=1.0 + rep / 10, msgs_per_s=h.count / 2,
                  mb_per_s=0.1, errors=0, client_cpu_s=cpu, client_cpu_method="clock",
                  extra={"latency_us": h.summary(), histogram.KEY: h.to_json(), "checked": h.count})


def test_merging_latency_shards_adds_histograms_throughputs_and_cpu_per_repetition() -> None:
    rng = random.Random(7)
    values = {(shard, rep): _values(rng, 500 * shard + rep, True) for shard in (1, 2) for rep in (1, 2, 3)}
    shards = [(f"shard-{s}", _latency_run(s, [_sample(r, values[s, r], 0.01 * s * r) for r in (1, 2, 3)]))
              for s in (1, 2)]
    merged = merge.merge_shards(shards, ["wsbench", "merge"])
    [cell] = merged.cells
    assert [s.rep for s in cell.samples] == [1, 2, 3]  # repetitions stay the unit of spread
    for sample in cell.samples:
        parts = [run.cells[0].samples[sample.rep - 1] for _, run in shards]
        union = _hist(LOADGEN, values[1, sample.rep] + values[2, sample.rep])
        assert sample.extra["latency_us"] == union.summary()
        assert sample.extra[histogram.KEY]["buckets"] == union.to_json()["buckets"]
        assert sample.messages == sum(p.messages for p in parts)
        assert sample.msgs_per_s == sum(p.msgs_per_s for p in parts)
        assert sample.client_cpu_s == pytest.approx(sum(p.client_cpu_s for p in parts))  # CPU/msg = ΣCPU / Σmsgs
        assert sample.seconds == max(p.seconds for p in parts)
        assert sample.extra["shards_latency_us"] == [p.extra["latency_us"] for p in parts]
    assert cell.summary("latency_p99_us") is not None


def test_a_failed_shard_repetition_fails_the_merged_repetition_never_merged_silently() -> None:
    ok = _sample(1, [1000.0, 2000.0], 0.01)
    shards = [("a", _latency_run(1, [ok])), ("b", _latency_run(2, [Sample(rep=1, error="client crashed")]))]
    [sample] = merge.merge_shards(shards, ["wsbench"]).cells[0].samples
    assert sample.error == "shard 2: client crashed"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_the_javascript_workload_reports_the_same_sparse_format_and_percentiles(tmp_path: Path) -> None:
    script = tmp_path / "h.mjs"
    script.write_text(
        f"import {{ Histogram }} from '{ROOT}/clients/workload/histogram.js';\n"
        "const h = new Histogram(); let x = 1;\n"
        "for (let i = 0; i < 5000; i++) { x = (x * 48271) % 2147483647; h.record(3 + (x % 100000) / 7.3); }\n"
        "console.log(JSON.stringify({latency_us: h.summary(), latency_hist: h.sparse(),\n"
        "                            empty: new Histogram().summary()}));\n")
    out = json.loads(subprocess.run(["node", str(script)], capture_output=True, text=True, check=True).stdout)
    assert out["empty"] == Histogram(*WORKLOAD_JS).summary() and out["empty"]["p99"] is None  # null, never 0
    hist = Histogram.from_json(out["latency_hist"])
    assert hist.layout == WORKLOAD_JS and hist.count == 5000
    assert hist.summary() == out["latency_us"]
