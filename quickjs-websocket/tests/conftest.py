"""pytest fixtures for the quickjs-websocket tests (helpers live in qjs_runs)."""
import pytest

from peer_raw import behaviour_files
from qjs_runs import ARM_ROOT, Peer, peer_argv


def pytest_collection_modifyitems(config, items):
    """make test-arm: what cannot apply to the armhf build under qemu-arm is skipped, one
    reason each (docs/arm.md)."""
    if not ARM_ROOT:
        return
    for item in items:
        if "valgrind" in item.name:
            item.add_marker(pytest.mark.skip(reason="valgrind cannot run an armhf guest under qemu-arm"))


@pytest.fixture(params=["ws", "wss"])
def scheme(request):
    """Every behavioural test runs over ws:// and over wss:// (the peers in TLS mode with
    build/tls's certificate, the client trusting the test CA only)."""
    return request.param


@pytest.fixture
def peer_factory(scheme, request):
    """make(kind): a peer of that kind (python, raw, lws, node), stopped after the test;
    the raw peer also serves the behaviours the requesting test module registers."""
    peers = []

    def make(kind):
        argv, cwd = peer_argv(kind, scheme == "wss",
                              behaviours=behaviour_files(request.module) if kind == "raw" else ())
        p = Peer(kind, argv, cwd, scheme == "wss")
        peers.append(p)
        return p

    yield make
    for p in peers:
        p.stop()


@pytest.fixture(params=["optimized", "baseline"])
def variant(request):
    """Every behavioural test runs with all optimizations and with QJSWS_DISABLE=all."""
    return {} if request.param == "optimized" else {"QJSWS_DISABLE": "all"}
