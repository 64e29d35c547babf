"""/broadcast (servers/README.md, item 13): every server of the catalog passes wsbench's verification
(verify.verify_broadcast) over ws://, lws also over wss://; on lws a subscriber that does
not read holds the publisher back without losing anything; a server that drops one
message for one subscriber fails the verification naming both."""

from __future__ import annotations

import asyncio
import sys

import pytest
from websockets.asyncio.client import connect as aconnect

from testkit.wss import ROOT, TLS_DIR, Server, client_context, server_tls

from wsbench.catalog import load_catalog
from wsbench.verify import verify_broadcast

CATALOG = load_catalog()
FIXTURE = ROOT / "harness/tests/fixtures/capacity_server.py"


def plain(server: str) -> tuple[list[str], dict[str, str]]:
    program = CATALOG.servers[server]
    missing = program.missing()
    if missing:
        pytest.skip(f"{missing[0]} missing (make setup)")
    return [*program.command, "--port", "0"], dict(program.env)


@pytest.mark.parametrize("server", list(CATALOG.servers))  # node-ws-native too: ws with bufferutil
def test_every_server_broadcasts_to_every_connection_in_order(server: str) -> None:
    assert "broadcast" in CATALOG.servers[server].features
    with Server(*plain(server)) as srv:
        check = verify_broadcast(f"ws://127.0.0.1:{srv.port}/")
    assert check.ok, f"{server}: {check.error}"
    assert len(check.checks) == 4


@pytest.mark.skipif(not (TLS_DIR / "manifest.json").exists(), reason="build/tls missing (make setup)")
def test_lws_broadcasts_over_tls() -> None:
    plain("lws")
    with Server(*server_tls("lws")) as srv:
        check = verify_broadcast(srv.url(), client_context())
    assert check.ok, check.error


def test_a_subscriber_that_does_not_read_holds_lws_publishers_back_and_loses_nothing() -> None:
    """6,000 messages of 16 KiB (94 MiB) through a ring of at most 4,096 messages / 64 MiB:
    while one subscriber reads nothing the others stop short of the end (the publisher's
    reads are paused), then every subscriber gets every message, in order. asyncio
    clients: the publisher must go on reading while its sends wait (a client whose reads
    wait for its sends would wait forever: it holds the ring's tail itself)."""
    count, size = 6000, 16384

    async def run(url: str) -> dict[str, list[int]]:
        got: dict[str, list[int]] = {"fast": [], "pub": [], "slow": []}
        async with aconnect(url, max_size=None, compression=None) as slow, \
                aconnect(url, max_size=None, compression=None) as fast, \
                aconnect(url, max_size=None, compression=None) as pub:
            async def read(name: str, ws) -> None:  # type: ignore[no-untyped-def]
                for _ in range(count):
                    got[name].append(int.from_bytes((await asyncio.wait_for(ws.recv(), 30))[:4], "little"))

            async def send() -> None:
                for i in range(count):
                    await pub.send(i.to_bytes(4, "little") + bytes(size - 4))

            tasks = [asyncio.create_task(c) for c in (read("fast", fast), read("pub", pub), send())]
            await asyncio.sleep(1.5)
            assert len(got["fast"]) < count, "the publisher was never held back"
            await asyncio.gather(*tasks, read("slow", slow))
        return got

    with Server(*plain("lws")) as srv:
        got = asyncio.run(run(f"ws://127.0.0.1:{srv.port}/broadcast"))
    assert got["slow"] == got["fast"] == got["pub"] == list(range(count))


def test_a_server_that_drops_one_message_for_one_subscriber_fails_naming_both() -> None:
    with Server([sys.executable, str(FIXTURE), "--port", "0", "--behave", "dropping",
                 "--drop-message", "5", "--drop-subscriber", "2"]) as srv:
        check = verify_broadcast(f"ws://127.0.0.1:{srv.port}/", timeout_s=1)
    assert not check.ok
    assert check.error == ("/broadcast: message 5 (text, 11 B, sent by connection 2) never reached "
                           "connection 2 (nothing within 1 s)"), check.error
