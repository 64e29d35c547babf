"""``--host ADDR`` (servers/README.md, item 2): every server listens on 127.0.0.1 unless it
is given an address, then on that one address only, and never on a wildcard. The tests
keep to loopback: 127.0.0.2 stands for another host's address."""

from __future__ import annotations

import socket
import subprocess

import pytest
from websockets.sync.client import connect

from testkit.wss import ROOT, SERVERS, Server

OTHER_HOST = "127.0.0.2"


def command(server: str, host: str | None) -> list[str]:
    from wsbench.catalog import load_catalog  # the venv's harness (make setup)

    argv = list(load_catalog().servers[server].command)
    if host is not None and server == "deno":  # Deno's permission names the address it may listen on
        argv = [f"--allow-net={host}" if a.startswith("--allow-net=") else a for a in argv]
    return [*argv, "--port", "0", *(["--host", host] if host is not None else [])]


def installed(server: str) -> bool:
    return (ROOT / command(server, None)[0]).exists()


def accepts(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(2)
        return s.connect_ex((host, port)) == 0


@pytest.mark.parametrize("server", SERVERS)
def test_a_server_listens_on_the_address_it_is_given_and_only_there(server: str) -> None:
    if not installed(server):
        pytest.skip(f"{server} is not installed (make setup)")
    with Server(command(server, OTHER_HOST)) as live:
        assert accepts(OTHER_HOST, live.port) and not accepts("127.0.0.1", live.port)
        with connect(f"ws://{OTHER_HOST}:{live.port}/", open_timeout=10) as ws:
            ws.send("over another address")
            assert ws.recv(timeout=10) == "over another address"
    with Server(command(server, None)) as live:  # the default is unchanged: 127.0.0.1
        assert accepts("127.0.0.1", live.port) and not accepts(OTHER_HOST, live.port)


@pytest.mark.parametrize("server", SERVERS)
@pytest.mark.parametrize("address", ["0.0.0.0", "::", "not-an-address"])
def test_a_wildcard_or_a_name_is_refused_in_one_line(server: str, address: str) -> None:
    if not installed(server):
        pytest.skip(f"{server} is not installed (make setup)")
    if server == "lws" and address == "::":
        address = "::1"  # lws-echo takes IPv4 addresses only: any IPv6 one is refused the same way
    argv = command(server, None) + ["--host", address]
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert proc.returncode != 0 and "WSBENCH-READY" not in proc.stdout
    assert "--host" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
