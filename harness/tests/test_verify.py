import sys
from pathlib import Path

import pytest

from wsbench import procs
from wsbench.catalog import Program
from wsbench.errors import WsbenchError
from wsbench.server import start_server
from wsbench.verify import text_payload, verify_broadcast, verify_echo

FIXTURE = Path(__file__).parent / "fixtures" / "echo_server.py"


def program(behave: str) -> Program:
    return Program(name=f"py-{behave}", kind="server", runtime="python", label=behave,
                   command=(sys.executable, str(FIXTURE), "--behave", behave), ready_timeout_s=3)


def test_text_payload_has_exact_utf8_size_and_multibyte_characters() -> None:
    for size in (0, 1, 11, 4096, 65536):
        text = text_payload(size)
        assert len(text.encode()) == size
    widths = {len(ch.encode()) for ch in text_payload(65536)}
    assert widths == {1, 2, 3, 4}


def test_a_correct_server_passes(tmp_path: Path) -> None:
    live = start_server(program("well"), tmp_path)
    try:
        result = verify_echo(live.url())
    finally:
        live.stop()
    assert result.ok, result.error
    assert len(result.checks) == 8


@pytest.mark.parametrize("behave, message", [("corrupt", "binary 11 B: echo differs at byte 10"),
                                              ("retype", "text 0 B: echoed as binary")])
def test_a_wrong_echo_fails_with_the_first_bad_check(tmp_path: Path, behave: str, message: str) -> None:
    live = start_server(program(behave), tmp_path)
    try:
        result = verify_echo(live.url())
    finally:
        live.stop()
    assert not result.ok
    assert result.error == message


@pytest.mark.parametrize("behave, message", [("silent", "printed no readiness line within 3 s"),
                                              ("die", "exited with code 3 before its readiness line")])
def test_a_server_that_never_gets_ready_is_named(tmp_path: Path, behave: str, message: str) -> None:
    with pytest.raises(WsbenchError) as err:
        start_server(program(behave), tmp_path)
    assert f"server 'py-{behave}': {message}" in str(err.value)
    assert not procs._live  # nothing left running


# --- /broadcast (verify_broadcast), against the capacity fixture (harness/tests/fixtures/capacity_server.py)

CAPACITY = Path(__file__).parent / "fixtures" / "capacity_server.py"


def capacity(*args: str) -> Program:
    return Program(name="py-capacity", kind="server", runtime="python", label="capacity",
                   command=(sys.executable, str(CAPACITY), *args), ready_timeout_s=10, features=("broadcast",))


@pytest.mark.parametrize("args, error", [
    (("--behave", "well"), None),
    (("--behave", "leaky", "--leak-kib", "16"), None),
    (("--behave", "dropping", "--drop-message", "14", "--drop-subscriber", "3"),
     "/broadcast: connection 3 received message 15 (text, 70000 B, sent by connection 1) where message 14 "
     "(binary, 300 B, sent by connection 1) was due (lost, duplicated or out of order)"),
    (("--behave", "dropping", "--drop-message", "30", "--drop-subscriber", "1"),
     "/broadcast: message 30 (text, 41 B, sent by connection 2) never reached connection 1 (nothing within 1 s)"),
])
def test_broadcast_verification(tmp_path: Path, args: tuple[str, ...], error: str | None) -> None:
    live = start_server(capacity(*args), tmp_path)
    try:
        result = verify_broadcast(live.url(), timeout_s=1)
    finally:
        live.stop()
    assert result.error == error and result.ok == (error is None)


def test_an_echo_server_is_no_broadcast_server(tmp_path: Path) -> None:
    live = start_server(program("well"), tmp_path)
    try:
        result = verify_broadcast(live.url(), timeout_s=1)
    finally:
        live.stop()
    assert result.error == ("/broadcast: message 1 (text, 11 B, sent by connection 1) never reached connection 2 "
                            "(nothing within 1 s)")
