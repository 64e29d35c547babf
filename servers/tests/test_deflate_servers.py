"""permessage-deflate on the servers that have it (servers/README.md, items 5 and 15):
with ``--deflate`` (the catalog's ``deflate`` arguments, as a run uses them) node-ws,
Bun.serve and lws (build/bin/lws-echo-deflate: servers/lws/tests/test_lws_deflate.py has
the rest of it) accept a raw client's offer and echo in RSV1 frames that inflate to what was
sent, each connection's WSBENCH-DEFLATE line says what was offered and answered;
without it they refuse the offer and print nothing; bad deflate arguments are one line."""

from __future__ import annotations

import re
import subprocess

import pytest

from testkit.background import Background
from testkit.deflate_wire import OFFER, RSV1, deflate_client, inflate, send_text
from wsbench.catalog import load_catalog
from wsbench.deflate import DEFLATE_LINE, with_deflate
from wsbench.paths import ROOT

TEXT = b'{"channel":"prices","symbol":"ACME","bid":101.25,"ask":101.5}' * 40  # 2,480 bytes: above ws' threshold


# lws' twin is another binary (servers/lws/README.md, "lws-echo-deflate"), until the catalog names it


def server(name: str, deflate: bool) -> Background:
    program = load_catalog().servers[name]
    program = with_deflate(program) if deflate else program
    return Background([*program.command, "--port", "0"], env=program.env)


@pytest.mark.parametrize("name", ["node-ws", "bun", "lws"])
def test_with_deflate_the_echo_is_compressed_and_inflates_to_what_was_sent(name: str) -> None:
    with server(name, deflate=True) as live:
        sock, headers, frames = deflate_client(live.port)
        with sock:
            assert headers["status"].startswith("HTTP/1.1 101")
            assert headers["sec-websocket-extensions"].startswith("permessage-deflate")
            send_text(sock, TEXT)
            frame = frames.next()
        assert frame.rsv == RSV1 and frame.opcode == 1 and frame.fin
        assert len(frame.payload) < len(TEXT) and inflate(frame.payload) == TEXT
        lines = live.wait_line("WSBENCH-DEFLATE")
    assert len(lines) == 1 and DEFLATE_LINE.match(lines[0]), lines
    assert f'offered="{OFFER}"' in lines[0]
    answered = headers["sec-websocket-extensions"]
    assert lines[0].endswith("response=?" if name == "bun" else f'response="{answered}"')


@pytest.mark.parametrize("name", ["node-ws", "bun", "lws"])
def test_without_deflate_the_offer_is_refused_and_nothing_is_printed(name: str) -> None:
    with server(name, deflate=False) as live:
        sock, headers, frames = deflate_client(live.port)
        with sock:
            assert "sec-websocket-extensions" not in headers
            send_text(sock, TEXT)
            frame = frames.next()
        assert frame.rsv == 0 and frame.payload == TEXT
        assert not live.wait_line("WSBENCH-DEFLATE", timeout=0.3)


def test_a_client_that_offers_nothing_gets_none() -> None:
    with server("node-ws", deflate=True) as live:
        sock, headers, frames = deflate_client(live.port, offer=None)
        with sock:
            send_text(sock, b"x" * 2000)
            assert frames.next().rsv == 0
        assert live.wait_line("WSBENCH-DEFLATE") == ["WSBENCH-DEFLATE offered=none response=none"]


def test_ws_takes_the_rfc_7692_parameters_and_a_threshold_of_0() -> None:
    program = with_deflate(load_catalog().servers["node-ws"])
    argv = [*program.command, "--port", "0", "--deflate-threshold", "0", "--deflate-server-no-context-takeover",
            "--deflate-server-max-window-bits", "10"]
    with Background(argv, env=program.env) as live:
        sock, headers, frames = deflate_client(live.port)
        with sock:
            send_text(sock, b"tiny")
            frame = frames.next()
    assert headers["sec-websocket-extensions"] == ("permessage-deflate; server_no_context_takeover; "
                                                   "server_max_window_bits=10")
    assert frame.rsv == RSV1 and inflate(frame.payload) == b"tiny"


def test_ws_threshold_applies_only_without_context_takeover() -> None:
    program = with_deflate(load_catalog().servers["node-ws"])
    for extra, compressed in (([], True), (["--deflate-server-no-context-takeover"], False)):
        with Background([*program.command, "--port", "0", *extra], env=program.env) as live:
            sock, _, frames = deflate_client(live.port)
            with sock:
                send_text(sock, b"tiny")
                assert (frames.next().rsv == RSV1) is compressed, extra


@pytest.mark.parametrize("compressor, answer", [
    ("shared", "permessage-deflate; client_no_context_takeover; server_no_context_takeover"),
    ("dedicated", "permessage-deflate; client_no_context_takeover"),
])
def test_bun_answers_as_its_compressor_says(compressor: str, answer: str) -> None:
    program = with_deflate(load_catalog().servers["bun"])
    with Background([*program.command, "--port", "0", "--deflate-compressor", compressor]) as live:
        sock, headers, frames = deflate_client(live.port)
        with sock:
            send_text(sock, TEXT)
            frame = frames.next()
    assert headers["sec-websocket-extensions"] == answer
    assert frame.rsv == RSV1 and inflate(frame.payload) == TEXT


@pytest.mark.parametrize("name, args, says", [
    ("bun", ["--deflate", "--deflate-threshold", "0"], "--deflate-threshold: Bun.serve has no knob"),
    ("node-ws", ["--deflate-threshold", "0"], "--deflate-threshold goes with --deflate"),
    ("node-ws", ["--deflate", "--deflate-server-max-window-bits", "16"],
     'invalid --deflate-server-max-window-bits "16": give window bits from 9 to 15'),
    ("node-ws", ["--deflate", "--deflate-compressor", "shared"], "--deflate-compressor: ws has no such knob"),
])
def test_a_deflate_argument_it_cannot_take_is_one_line(name: str, args: list[str], says: str) -> None:
    program = load_catalog().servers[name]
    run = subprocess.run([*program.command, "--port", "0", *args], cwd=ROOT, capture_output=True, text=True,
                         timeout=20, stdin=subprocess.DEVNULL)
    assert run.returncode != 0 and "WSBENCH-READY" not in run.stdout
    assert re.fullmatch(rf"\w[\w-]* server: {re.escape(says)}.*\n", run.stderr), run.stderr
