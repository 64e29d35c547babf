"""lws-echo is strict (servers/lws/README.md, "Strictness"): a raw client (testkit/raw_ws.py,
frames from wsbench.conformance.frames) sends each protocol error RFC 6455 names and reads
the close code the server answers with, acknowledges the close as a client does, and sees
TCP end; valid UTF-8 in every shape is still echoed. The cases lws-echo cannot refuse are
pinned too, so that the README's list of limitations stays true."""

from __future__ import annotations

import socket
import struct
import time
from dataclasses import dataclass, field

import pytest

from testkit.background import Background
from testkit.raw_ws import CLIENT_MASK, masked_close, raw_client
from testkit.wss import ROOT, TLS_DIR, cert_args, client_context
from wsbench.conformance.frames import (BINARY, CLOSE, CONT, PING, PONG, TEXT, ClientFrame, close_payload,
                                        server_frame, split_frame)

LWS_ECHO = ROOT / "build" / "bin" / "lws-echo"
PROMPT_S = 1.5  # TCP ends this soon after the close handshake when lws-echo fails the connection itself
CLOSE_ACK_S = 5.0  # lws' own wait for the client's close (PENDING_TIMEOUT_CLOSE_ACK)

pytestmark = pytest.mark.skipif(not LWS_ECHO.exists(), reason="build/bin/lws-echo missing (make setup)")


def frame(opcode: int, payload: bytes = b"", **kw: object) -> bytes:
    """A client frame (masked unless mask=None is given)."""
    kw.setdefault("mask", CLIENT_MASK)
    return server_frame(opcode, payload, **kw)  # type: ignore[arg-type]


@dataclass
class Answer:
    frames: list[ClientFrame] = field(default_factory=list)  # what the server sent (a server's frames parse alike)
    ended: bool = False  # TCP ended (EOF or reset)
    after_close_s: float = -1.0  # how long after the server's close frame it ended

    @property
    def close(self) -> ClientFrame | None:
        return next((f for f in self.frames if f.opcode == CLOSE), None)

    @property
    def close_code(self) -> int | None:
        return self.close.close_code() if self.close else None

    def data(self) -> list[tuple[int, bytes]]:
        return [(f.opcode, f.payload) for f in self.frames if f.opcode in (TEXT, BINARY, CONT)]


def talk(url: str, sends: list[bytes], *, ack: bool = True, expect: int | None = None,
         wait_s: float = CLOSE_ACK_S + 3, context: object = None) -> Answer:
    """Send ``sends`` one write each, read everything the server sends until TCP ends (or
    ``wait_s`` passes, or ``expect`` data frames came and nothing more within a moment);
    the server's close frame is acknowledged with a close of ours when ``ack``."""
    s, head = raw_client(url, context=context)  # type: ignore[arg-type]
    assert head.startswith(b"HTTP/1.1 101"), head
    buf = bytearray(head.split(b"\r\n\r\n", 1)[1])
    answer = Answer()
    closed_at = None
    try:
        for data in sends:
            s.sendall(data)
        deadline = time.monotonic() + wait_s
        while time.monotonic() < deadline:
            while (got := split_frame(buf)) is not None:
                f, n = got
                del buf[:n]
                answer.frames.append(f)
                if f.opcode == CLOSE and closed_at is None:
                    closed_at = time.monotonic()
                    if ack:
                        s.sendall(masked_close(f.close_code() or 1000))
            if expect is not None and closed_at is None and len(answer.data()) >= expect:
                s.settimeout(0.2)  # the echoes came; is anything else sent?
            else:
                s.settimeout(max(0.01, deadline - time.monotonic()))
            try:
                chunk = s.recv(65536)
            except socket.timeout:
                if expect is not None and closed_at is None and len(answer.data()) >= expect:
                    break
                continue
            except (ConnectionResetError, BrokenPipeError):
                chunk = b""
            if not chunk:
                answer.ended = True
                break
            buf += chunk
    finally:
        s.close()
    if answer.ended and closed_at is not None:
        answer.after_close_s = time.monotonic() - closed_at
    return answer


@pytest.fixture(scope="module")
def echo():  # type: ignore[no-untyped-def]
    with Background([LWS_ECHO, "--port", "0"]) as server:
        yield f"ws://127.0.0.1:{server.port}"


# ------------------------------------------------------------------ violations

# name: (frames the client sends, the close code lws-echo answers with, TCP ends promptly
# after the client acknowledges the close)
BAD_UTF8 = {
    "lone_ff": b"\xff",
    "fe": b"ok\xfe",
    "lone_continuation": b"\x80",
    "surrogate_high": b"\xed\xa0\x80",
    "surrogate_low": b"\xed\xbf\xbf",
    "overlong_slash_2": b"\xc0\xaf",
    "overlong_slash_3": b"\xe0\x80\xaf",
    "overlong_slash_4": b"\xf0\x80\x80\xaf",
    "above_10ffff": b"\xf4\x90\x80\x80",
    "f5": b"\xf5\x80\x80\x80",
    "truncated_at_end": b"abc\xe2\x82",
    "truncated_then_ascii": b"\xe2\x82a",
    "truncated_4_at_end": b"\xf0\x9f\x98",
}

VIOLATIONS: dict[str, tuple[list[bytes], int, bool]] = {
    **{f"text_{name}": ([frame(TEXT, bad)], 1007, True) for name, bad in BAD_UTF8.items()},
    # the invalid sequence in the first fragment: failed before the message ends (fail fast)
    "fragment_invalid_first_fragment": ([frame(TEXT, b"valid\xff", fin=False)], 1007, True),
    "fragment_invalid_in_continuation": ([frame(TEXT, b"ok", fin=False), frame(CONT, b"\xed\xa0\x80", fin=False)],
                                         1007, True),
    # a sequence split across fragments that goes wrong in the second
    "fragment_split_then_wrong": ([frame(TEXT, b"\xe2", fin=False), frame(CONT, b"\x82\x41")], 1007, True),
    # a sequence left open when the message ends with an empty continuation (lws' own check misses it)
    "fragment_open_then_empty_final": ([frame(TEXT, b"a\xe2\x82", fin=False), frame(CONT, b"")], 1007, True),
    # one frame that declares 64 KiB and starts with an invalid byte: failed before the rest arrives
    # (the client's close then reads as more of that frame's payload: TCP ends at lws' timeout)
    "frame_invalid_before_its_end": ([frame(TEXT, b"\xff" + b"a" * 99, declared=65536)[:110]], 1007, False),
    # a ping between the fragments does not hide the open sequence
    "fragment_open_ping_then_final": ([frame(TEXT, b"\xf0\x9f", fin=False), frame(PING, b"p"), frame(CONT, b"\x98")],
                                      1007, True),
    # close frames
    "close_reason_ff": ([frame(CLOSE, close_payload(1000, b"bye\xff"))], 1007, True),
    "close_reason_surrogate": ([frame(CLOSE, close_payload(1000, b"\xed\xa0\x80"))], 1007, True),
    "close_reason_truncated": ([frame(CLOSE, close_payload(1001, b"\xe2\x82"))], 1007, True),
    "close_one_byte_body": ([frame(CLOSE, b"\x03")], 1002, True),
    "close_code_0": ([frame(CLOSE, close_payload(0))], 1002, True),
    "close_code_999": ([frame(CLOSE, close_payload(999))], 1002, True),
    "close_code_1004": ([frame(CLOSE, close_payload(1004))], 1002, True),
    "close_code_1005": ([frame(CLOSE, close_payload(1005))], 1002, True),
    "close_code_1006": ([frame(CLOSE, close_payload(1006))], 1002, True),
    "close_code_1015": ([frame(CLOSE, close_payload(1015))], 1002, True),
    "close_code_1016": ([frame(CLOSE, close_payload(1016))], 1002, True),
    "close_code_2999": ([frame(CLOSE, close_payload(2999))], 1002, True),
    "close_code_5000": ([frame(CLOSE, close_payload(5000))], 1002, True),
    "close_code_65535": ([frame(CLOSE, close_payload(65535))], 1002, True),
    # reserved bits: no extension is ever negotiated
    "rsv1_text": ([frame(TEXT, b"hi", rsv=4)], 1002, True),
    "rsv1_binary": ([frame(BINARY, b"\x00", rsv=4)], 1002, True),
    "rsv1_empty_text": ([frame(TEXT, b"", rsv=4)], 1002, True),
    "rsv1_continuation": ([frame(TEXT, b"a", fin=False), frame(CONT, b"b", rsv=4)], 1002, True),
    "rsv1_pong": ([frame(PONG, b"pong", rsv=4)], 1002, True),
    "rsv1_close": ([frame(CLOSE, close_payload(1000), rsv=4)], 1002, True),
    # lws' own checks (the close comes at once; TCP at lws' close-ack timeout for the RSV2/3 ones)
    "rsv2_text": ([frame(TEXT, b"hi", rsv=2)], 1002, False),
    "rsv3_text": ([frame(TEXT, b"hi", rsv=1)], 1002, False),
    "opcode_3": ([frame(3)], 1002, True),
    "opcode_7": ([frame(7, b"x")], 1002, True),
    "opcode_b": ([frame(0xB)], 1002, True),
    "opcode_f": ([frame(0xF, b"x")], 1002, True),
    "fragmented_ping": ([frame(PING, b"x", fin=False)], 1002, True),
    "fragmented_close": ([frame(CLOSE, close_payload(1000), fin=False)], 1002, True),
    "continuation_without_start": ([frame(CONT, b"x")], 1002, True),
    "text_inside_fragmented_text": ([frame(TEXT, b"a", fin=False), frame(TEXT, b"b")], 1002, True),
    "binary_inside_fragmented_text": ([frame(TEXT, b"a", fin=False), frame(BINARY, b"b")], 1002, True),
}


@pytest.mark.parametrize("name", sorted(VIOLATIONS))
def test_a_protocol_error_is_failed_with_its_close_code(echo: str, name: str) -> None:
    sends, code, prompt = VIOLATIONS[name]
    answer = talk(echo + "/", sends)
    assert answer.close_code == code, (name, answer.frames)
    assert not [f for f in answer.data()], f"{name}: echoed before failing: {answer.data()}"
    assert answer.ended, f"{name}: TCP still open"
    assert answer.after_close_s < (PROMPT_S if prompt else CLOSE_ACK_S + 1.5), (name, answer.after_close_s)


@pytest.mark.parametrize("name", ["close_reason_ff", "close_one_byte_body", "rsv1_close"])
def test_a_bad_close_frame_ends_tcp_at_once_without_waiting_for_an_answer(echo: str, name: str) -> None:
    """The client has closed already: lws-echo sends its close and ends TCP, it does not wait
    5 s for an acknowledgement that will not come."""
    sends, code, _ = VIOLATIONS[name]
    answer = talk(echo + "/", sends, ack=False)
    assert answer.close_code == code and answer.ended and answer.after_close_s < PROMPT_S, answer


def test_a_failed_text_message_ends_tcp_at_lws_timeout_when_the_client_never_answers(echo: str) -> None:
    answer = talk(echo + "/", [frame(TEXT, b"\xff")], ack=False)
    assert answer.close_code == 1007 and answer.ended
    assert CLOSE_ACK_S - 1 < answer.after_close_s < CLOSE_ACK_S + 1.5, answer.after_close_s


@pytest.mark.parametrize("bad", [frame(TEXT, b"x", rsv=4), frame(TEXT, b"x", rsv=2), frame(TEXT, b"\xff"),
                                 frame(7, b"x")], ids=["rsv1", "rsv2", "utf8", "opcode"])
def test_no_data_follows_the_close_of_lws_echo(echo: str, bad: bytes) -> None:
    """A message echoed late must not follow the close (5.5.1): a valid message and the bad
    one in one write; the valid one may be echoed before the close, or not at all."""
    answer = talk(echo + "/", [frame(TEXT, b"first") + bad + frame(PING, b"p")])
    at = next(i for i, f in enumerate(answer.frames) if f.opcode == CLOSE)
    assert [f.opcode for f in answer.frames[at + 1:]] == [], answer.frames
    assert answer.data() in ([], [(TEXT, b"first")]) and answer.ended, answer


def test_a_message_too_big_is_failed_with_1009(echo: str) -> None:
    """lws-echo takes messages up to 256 MiB (the contract asks 64 MiB): a frame that declares
    more is failed with 1009 at its first bytes."""
    head = frame(BINARY, b"\x00" * 64, declared=(256 << 20) + 1)
    answer = talk(echo + "/", [head[:14 + 64]])
    assert answer.close_code == 1009 and answer.ended, answer


@pytest.mark.parametrize("path", ["/?fragments=3", "/broadcast", "/?serve=utf8&bytes=16"])
def test_every_path_validates(echo: str, path: str) -> None:
    answer = talk(echo + path, [frame(TEXT, b"fine", fin=False), frame(CONT, b"\xc0\xaf")])
    assert answer.close_code == 1007 and answer.ended, (path, answer.frames)


@pytest.mark.skipif(not (TLS_DIR / "manifest.json").exists(), reason="build/tls missing (make setup)")
def test_over_tls_the_same_codes() -> None:
    with Background([LWS_ECHO, "--port", "0", *cert_args()]) as server:
        url, context = f"wss://127.0.0.1:{server.port}/", client_context()
        for sends, code in (([frame(TEXT, b"\xed\xa0\x80")], 1007), ([frame(CLOSE, b"\x03")], 1002),
                            ([frame(TEXT, b"x", rsv=4)], 1002), ([frame(CLOSE, close_payload(1000, b"\xff"))], 1007)):
            answer = talk(url, sends, context=context)
            assert answer.close_code == code and answer.ended and answer.after_close_s < PROMPT_S, answer
        assert echoed(url, [frame(TEXT, "é😀".encode())], context=context) == [(TEXT, "é😀".encode())]


# ------------------------------------------------------------------ valid input still echoes

SAMPLE = "aé€😀z".encode()  # 1-, 2-, 3- and 4-byte characters


def echoed(url: str, sends: list[bytes], count: int = 1, context: object = None) -> list[tuple[int, bytes]]:
    answer = talk(url, sends, expect=count, context=context)
    assert answer.close is None and not answer.ended, answer
    return answer.data()


def test_utf8_split_at_every_byte_position_is_echoed(echo: str) -> None:
    for i in range(len(SAMPLE) + 1):
        got = echoed(echo + "/", [frame(TEXT, SAMPLE[:i], fin=False) + frame(CONT, SAMPLE[i:])])
        assert got == [(TEXT, SAMPLE)], i


def test_utf8_split_at_every_byte_position_in_separate_writes(echo: str) -> None:
    for i in range(1, len(SAMPLE)):
        got = echoed(echo + "/", [frame(TEXT, SAMPLE[:i], fin=False), frame(CONT, SAMPLE[i:])])
        assert got == [(TEXT, SAMPLE)], i


def test_utf8_one_byte_per_fragment_with_pings_between(echo: str) -> None:
    frames = [frame(TEXT if i == 0 else CONT, SAMPLE[i:i + 1], fin=i == len(SAMPLE) - 1) for i in range(len(SAMPLE))]
    sends = [frames[0]] + [frame(PING, b"p") + f for f in frames[1:]]
    assert echoed(echo + "/", sends) == [(TEXT, SAMPLE)]


def test_a_valid_text_in_one_byte_writes(echo: str) -> None:
    whole = frame(TEXT, SAMPLE * 3)
    assert echoed(echo + "/", [whole[i:i + 1] for i in range(len(whole))]) == [(TEXT, SAMPLE * 3)]


@pytest.mark.parametrize("text", [b"", "😀".encode(), "\U0010ffff".encode(), "\ud7ff\ue000\ufffd".encode(),
                                  "\u0080\u07ff\u0800\uffff\U00010000".encode(), b"\x7f" * 300,
                                  ("κόσμε" * 20000).encode()])
def test_valid_texts_are_echoed(echo: str, text: bytes) -> None:
    assert echoed(echo + "/", [frame(TEXT, text)]) == [(TEXT, text)]


def test_empty_fragments_are_echoed(echo: str) -> None:
    assert echoed(echo + "/", [frame(TEXT, b"", fin=False) + frame(CONT, b"", fin=False) + frame(CONT, b"")]) == \
        [(TEXT, b"")]


def test_binary_is_not_utf8_checked(echo: str) -> None:
    assert echoed(echo + "/", [frame(BINARY, b"\xff\xed\xa0\x80\xc0")]) == [(BINARY, b"\xff\xed\xa0\x80\xc0")]


def test_valid_close_frames_are_echoed(echo: str) -> None:
    for body in (b"", close_payload(1000), close_payload(1001, "fin é".encode()), close_payload(3000),
                 close_payload(4999, b"x" * 123)):
        answer = talk(echo + "/", [frame(CLOSE, body)])
        assert answer.close is not None and answer.close.payload == body and answer.ended, body
        assert answer.after_close_s < PROMPT_S


def test_a_pong_without_rsv_is_ignored_and_a_ping_answered(echo: str) -> None:
    answer = talk(echo + "/", [frame(PONG, b"unsolicited") + frame(PING, b"x" * 125) + frame(TEXT, b"t")], expect=1)
    assert [(f.opcode, f.payload) for f in answer.frames] == [(PONG, b"x" * 125), (TEXT, b"t")], answer


def test_the_fragments_option_still_splits_a_text(echo: str) -> None:
    got = echoed(echo + "/?fragments=4", [frame(TEXT, SAMPLE)], count=4)
    assert got[0][0] == TEXT and b"".join(p for _, p in got) == SAMPLE


# ------------------------------------------------------------------ what lws-echo cannot refuse

LIMITS = {
    # unmasked client frames: lws records the mask bit and tells no one (README.md)
    "unmasked_text": ([server_frame(TEXT, b"hi")], "echo"),
    # RSV1 on a ping: lws answers the ping itself, no callback sees it
    "rsv1_ping": ([frame(PING, b"p", rsv=4)], "pong"),
    # RSV1 on an empty pong: lws passes no empty pong to the callback
    "rsv1_empty_pong": ([frame(PONG, b"", rsv=4) + frame(TEXT, b"after")], "echo"),
    # a control frame over 125 bytes: lws drops TCP, with no close frame
    "ping_126": ([frame(PING, b"x" * 126)], "dropped"),
    # a 64-bit length with its top bit set: lws drops TCP, with no close frame
    "length_top_bit": ([bytes((0x82, 0xFF)) + struct.pack("!Q", 1 << 63) + CLIENT_MASK], "dropped"),
    # close codes 1012-1014 (registered with IANA since RFC 6455): lws answers 1002
    "close_code_1012": ([frame(CLOSE, close_payload(1012))], "1002"),
}


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_what_lws_echo_cannot_refuse_is_as_documented(echo: str, name: str) -> None:
    sends, what = LIMITS[name]
    answer = talk(echo + "/", sends, expect=1, wait_s=3)
    if what == "echo":
        assert answer.close is None and answer.data(), (name, answer)
    elif what == "pong":
        assert [f.opcode for f in answer.frames] == [PONG], (name, answer)
    elif what == "dropped":
        assert answer.ended and not answer.frames, (name, answer)
    else:
        assert answer.close_code == int(what) and answer.ended, (name, answer)
