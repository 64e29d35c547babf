"""A peer that vanishes (vanish.py, netns.py; docs/misbehave.md, "Peers that vanish"):
inside a namespace of its own, a server that pings every second and closes on a pong
missing for 2 s frees the connection in about 3 s; one that never pings is "not freed
within" the bound; the namespace is gone afterwards; the workload key is checked."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wsbench import netns
from wsbench.catalog import Program, load_catalog
from wsbench.errors import WsbenchError
from wsbench.vanish import measure_vanish
from wsbench.workloads import Vanish, Workload, load_workloads

FIXTURE = Path(__file__).parent / "fixtures/keepalive_server.py"
LOADGEN = Path(__file__).resolve().parents[2] / "build/bin/wsbench-loadgen"

needs_netns = pytest.mark.skipif(netns.unavailable() is not None or not LOADGEN.exists(),
                                 reason=f"a vanishing peer {netns.unavailable() or 'needs build/bin/wsbench-loadgen'}")


def server(*args: str) -> Program:
    return Program(name="keepalive", kind="server", runtime="python", label="test-only keep-alive server",
                   command=(sys.executable, str(FIXTURE), *args))


def workload(bound_s: float) -> Workload:
    return Workload(name="vanish_test", source="test", description="a vanishing peer", kind="idle",
                    params={"connections": 1, "hold_ms": int(bound_s * 1000) + 10_000, "warm": True},
                    vanish=Vanish(bound_s=bound_s), timeout_s=60)


def namespaces() -> str:
    return subprocess.run(["ip", "netns", "list"], capture_output=True, text=True, check=True).stdout


@needs_netns
def test_a_server_that_pings_frees_the_vanished_peer(tmp_path: Path) -> None:
    sample = measure_vanish(load_catalog().clients["loadgen"], server("--ping-s", "1", "--pong-timeout-s", "2"),
                            workload(8), 1, tmp_path)
    assert sample.error is None, sample.error
    found = sample.extra["vanish"]
    assert found["freed_s"] is not None and 1.5 <= found["freed_s"] <= 4.5, found  # a ping within 1 s, 2 s for its pong
    assert sample.seconds == pytest.approx(found["freed_s"], abs=1e-3)
    assert found["segments_from_server"] >= 1  # its pings (and close) went towards the vanished peer
    assert found["keepalive"] is False and found["end_state"] in ("FIN_WAIT1", "gone")  # it closed; no ACK came
    assert f"{netns.PREFIX}" not in namespaces()


@needs_netns
def test_a_server_that_never_pings_does_not_free_it_within_the_bound(tmp_path: Path) -> None:
    sample = measure_vanish(load_catalog().clients["loadgen"], server("--ping-s", "0"), workload(4), 1, tmp_path)
    assert sample.error is None, sample.error
    found = sample.extra["vanish"]
    assert found["freed_s"] is None and found["bound_s"] == sample.seconds == 4
    assert found["segments_from_server"] == 0 and found["end_state"] == "ESTABLISHED"
    assert found["end_unacked_bytes"] == 0
    assert f"{netns.PREFIX}" not in namespaces()


@needs_netns
def test_a_server_that_cannot_start_fails_the_sample_and_the_namespace_goes(tmp_path: Path) -> None:
    broken = Program(name="broken", kind="server", runtime="python", label="exits at once",
                     command=(sys.executable, "-c", "raise SystemExit(3)"))
    sample = measure_vanish(load_catalog().clients["loadgen"], broken, workload(2), 1, tmp_path)
    assert sample.error is not None and "exited with code 3 before its readiness line" in sample.error
    assert sample.error.startswith("client 'loadgen' vs server 'broken' on 'vanish_test': ")
    assert f"{netns.PREFIX}" not in namespaces()


@pytest.mark.parametrize("table, why", [
    ('kind = "echo"\ntype = "text"\nsize = 1\ncount = 1', "only an idle workload's peer can vanish"),
    ('kind = "idle"\nconnections = 2\nhold_ms = 30000', "needs connections = 1"),
    ('kind = "idle"\nconnections = 1\nhold_ms = 30000\nping_ms = 100', "no ping_ms"),
    ('kind = "idle"\nconnections = 1\nhold_ms = 10000', "hold_ms must be at least bound_s + 5 s (25000 ms)"),
])
def test_the_vanish_key_is_checked(tmp_path: Path, table: str, why: str) -> None:
    (tmp_path / "w.toml").write_text(textwrap.dedent(f"""\
        [workload.v]
        description = "x"
        {table}
        vanish = {{ bound_s = 20 }}
        """).replace("\n        ", "\n"))
    with pytest.raises(WsbenchError, match="vanish: ") as exc:
        load_workloads(tmp_path)
    assert why in str(exc.value)
