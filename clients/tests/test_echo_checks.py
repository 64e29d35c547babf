"""Every client kind checks what comes back (clients/README.md, "Verification").

A test server corrupts one byte of one message of a thousand; every client of the matrix
(the JavaScript runtimes through the shared workload, QuickJS optimized and baseline, and
the native load generator) must fail the run, naming that message and the byte.
Clients are run directly (no harness), one connection, on loopback.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from flipping_server import Flip, FlippingServer

from wsbench.catalog import load_catalog

ROOT = Path(__file__).resolve().parents[2]
CATALOG = load_catalog()
CLIENTS = [c.name for c in CATALOG.select("client", None, None)]
JS_CLIENTS = [c for c in CLIENTS if c != "loadgen"]


def run(client: str, url: str, *args: str, timeout: float = 120) -> dict[str, object]:
    program = CATALOG.clients[client]
    missing = program.missing()
    assert not missing, f"{client}: {missing[0]} is missing (make setup)"
    env = {k: v for k, v in os.environ.items() if k != "WSBENCH_HOLD"}
    proc = subprocess.run([*program.command, "--url", url, *args], cwd=ROOT, env={**env, **program.env},
                          capture_output=True, text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    lines = [ln for ln in proc.stdout.splitlines() if ln.startswith("{")]
    assert lines, f"{client}: no result line; stderr: {proc.stderr[-500:]}"
    result = json.loads(lines[-1])
    assert ("error" in result) == (proc.returncode != 0), (client, proc.returncode, result)
    return result


def echo_args(kind: str, size: int, count: int, warmup: int) -> list[str]:
    return ["--type", kind, "--size", str(size), "--count", str(count), "--warmup", str(warmup)]


def failure(result: dict[str, object]) -> str:
    assert "error" in result, f"the corrupted echo went unnoticed: {result}"
    return str(result["error"])


@pytest.mark.parametrize("client", CLIENTS)
@pytest.mark.parametrize("kind", ["binary", "text"])
def test_a_flipped_sequence_number_is_caught(client: str, kind: str) -> None:
    """Byte 0 of every 1000th message: the sequence number, checked on every echo."""
    with FlippingServer(Flip(offset=0, every=1000)) as server:
        error = failure(run(client, server.url, *echo_args(kind, 64, 3000, 200)))
    assert server.flipped[0] == 1000
    assert re.search(r"echo of message 1000 \(measured\) differs at byte 0\b", error), error
    assert "carries sequence number" in error, error


@pytest.mark.parametrize("client", CLIENTS)
def test_a_flipped_byte_in_the_warmup_is_caught(client: str) -> None:
    """Every warm-up echo is compared byte for byte."""
    with FlippingServer(Flip(offset=40, only=150)) as server:
        error = failure(run(client, server.url, *echo_args("binary", 64, 1000, 200)))
    assert re.search(r"echo of message 150 \(warm-up\) differs at byte 40: got 0x29, sent 0x28", error), error


@pytest.mark.parametrize("client", CLIENTS)
def test_a_flipped_byte_in_the_last_echo_of_a_round_is_caught(client: str) -> None:
    """The last echo of every measured round is compared byte for byte."""
    with FlippingServer(Flip(offset=999, only=1000)) as server:
        error = failure(run(client, server.url, *echo_args("binary", 1024, 1000, 0)))
    assert re.search(r"echo of message 1000 \(measured\) differs at byte 999\b", error), error


@pytest.mark.parametrize("client", JS_CLIENTS)
def test_every_text_echo_is_compared_whole_by_the_shared_workload(client: str) -> None:
    """A body byte of every 1000th text message: caught at the first one."""
    with FlippingServer(Flip(offset=30, every=1000)) as server:
        error = failure(run(client, server.url, *echo_args("text", 64, 3000, 0)))
    assert re.search(r"echo of message 1000 \(measured\) differs at byte 30\b", error), error


@pytest.mark.parametrize("client", CLIENTS)
def test_a_clean_server_passes_and_every_echo_is_counted_as_checked(client: str) -> None:
    with FlippingServer(Flip(offset=0, only=10**9)) as server:
        result = run(client, server.url, *echo_args("binary", 64, 3000, 100), "--min-ms", "200")
    assert "error" not in result, result
    assert result["messages"] == result["checked"] == 3000 * result["rounds"]  # type: ignore[operator]
    assert int(result["compared"]) >= result["rounds"]  # type: ignore[call-overload]


@pytest.mark.skipif(not shutil.which("valgrind"), reason="valgrind not installed")
def test_the_qjs_checks_in_c_are_clean_under_valgrind(tmp_path: Path) -> None:
    """clients/quickjs-check/check.c, on every path: seq and diff, equal and not (the last
    echo of the round, message 1100, is compared byte for byte and differs)."""
    log = tmp_path / "vg.log"
    with FlippingServer(Flip(offset=40, only=1100)) as server:
        program = CATALOG.clients["quickjs"]
        proc = subprocess.run(["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite",
                               "--error-exitcode=9", f"--log-file={log}",
                               *program.command, "--url", server.url, *echo_args("binary", 64, 1000, 100)],
                              cwd=ROOT, capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    text = log.read_text()
    assert "differs at byte 40" in proc.stdout, proc.stdout[-500:]
    assert "ERROR SUMMARY: 0 errors" in text, text[-3000:]
    assert re.search(r"definitely lost: 0 bytes|All heap blocks were freed", text), text[-3000:]
