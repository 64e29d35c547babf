"""Two verdicts per server and case, from what the client saw (replies.py) alone.

The verdict (expectations.py says what each expectation asks): S strict, n non-strict, F fail,
I informational. The close behaviour, judged apart as Autobahn does: S when the closing
handshake completed (a close frame each way) and the server then closed TCP first (RFC
6455 7.1.1: "the underlying TCP connection, in most normal cases, SHOULD be closed first
by the server"); n when the handshake completed but the client had to close TCP (or the
server reset it); F when the server never sent a close frame (it dropped TCP, or the
connection stayed open)."""

from __future__ import annotations

from ..conformance.observation import sendable
from ..model import ServerVerdict
from .server_cases import LIMIT_CODES, Msg, ServerCase
from .replies import CLIENT_CLOSED, GAVE_UP, SERVER_EOF, SERVER_RESET, Received, ServerObservation

STRICT, NON_STRICT, FAIL, INFORMATIONAL = "strict", "non-strict", "fail", "informational"


def judge(case: ServerCase, obs: ServerObservation) -> ServerVerdict:
    verdict, detail = _verdict(case, obs)
    close, close_detail = close_behaviour(obs)
    return ServerVerdict(verdict, detail, close, close_detail, obs.to_json())


def close_behaviour(obs: ServerObservation) -> tuple[str, str]:
    if obs.handshake is not None:
        return FAIL, "never upgraded"
    server_close = obs.server_close()
    if server_close is None:
        if obs.server_dropped:
            how = "reset" if obs.tcp_end == SERVER_RESET else "closed"
            return FAIL, f"{how} TCP after {_ms(obs.tcp_end_t)} without a close frame"
        return FAIL, "sent no close frame; the client gave up and closed TCP"
    by = "its own" if obs.server_started_close() else "the client's"
    code = _code(server_close[1].close_code())
    if obs.tcp_end == SERVER_EOF:
        return STRICT, f"clean: close {code} (answering {by} close), then the server closed TCP"
    if obs.tcp_end == SERVER_RESET:
        return NON_STRICT, f"close {code} (answering {by} close), then the server reset TCP instead of closing it"
    if obs.tcp_end == CLIENT_CLOSED:
        return NON_STRICT, (f"close {code}, but the server had not closed TCP 1 s after the closing handshake: the "
                            "client did (7.1.1: the server SHOULD close first)")
    return FAIL, f"close {code}, then the connection stayed open"


def _verdict(case: ServerCase, obs: ServerObservation) -> tuple[str, str]:
    if obs.handshake is not None:
        return FAIL, f"the upgrade failed: {obs.handshake}"
    problem = obs.problems()
    if problem:
        return FAIL, problem
    if case.expect.kind == "fail":
        return _failing(case, obs)
    if case.expect.kind == "info":
        return _informational(obs)
    return _echoing(case, obs)


def _failing(case: ServerCase, obs: ServerObservation) -> tuple[str, str]:
    allowed = list(case.expect.messages)
    got = obs.messages()
    extra = got[len(allowed):] if _same_prefix(got, allowed) else got
    if extra:
        return FAIL, f"echoed {_describe(extra[0])}, which it must not"
    server_close = obs.server_close()
    if server_close is not None:
        t, f = server_close
        code = f.close_code()
        if code not in case.expect.codes:
            want = " or ".join(map(str, case.expect.codes))
            return FAIL, f"closed with {_code(code)}{_reason(f.close_reason())}, expected {want}"
        if case.expect.before_end and obs.script_done_t is not None and obs.step_t and t >= obs.step_t[-1]:
            return NON_STRICT, f"closed {code} only once the message had ended ({_ms(t)})"
        return STRICT, f"closed {code} after {_ms(t)}"
    if obs.server_dropped:
        how = "reset" if obs.tcp_end == SERVER_RESET else "closed"
        return NON_STRICT, f"{how} TCP without a close frame after {_ms(obs.tcp_end_t)} (7.1.7 permits it)"
    if obs.tcp_end == GAVE_UP:
        return FAIL, f"no reaction within {case.react_s:g} s (the connection stayed open)"
    return FAIL, f"the connection ended without a close frame ({obs.tcp_end})"


def _echoing(case: ServerCase, obs: ServerObservation) -> tuple[str, str]:
    server_close = obs.server_close()
    got = obs.messages()
    if server_close is not None and obs.server_started_close():
        f = server_close[1]
        code = f.close_code()
        if case.expect.too_big_ok and code in LIMIT_CODES:
            return INFORMATIONAL, f"refused the message with {code} ({LIMIT_CODES[code]}){_reason(f.close_reason())}"
        return FAIL, (f"failed the connection on valid input: closed {_code(f.close_code())}"
                      f"{_reason(f.close_reason())} after {_ms(server_close[0])}")
    if server_close is None and obs.server_dropped and (obs.our_close_t is None or obs.tcp_end_t is None
                                                        or obs.tcp_end_t < obs.our_close_t):
        return FAIL, f"dropped TCP on valid input after {_ms(obs.tcp_end_t)}"
    wrong = compare(got, list(case.expect.messages))
    if wrong:
        return FAIL, wrong
    pongs, want = obs.pongs(), list(case.expect.pongs)
    coalesced = False
    if pongs != want:
        if case.expect.coalesce and pongs and _subsequence(pongs, want) and pongs[-1] == want[-1]:
            coalesced = True
        elif len(pongs) < len(want):
            return FAIL, f"{_count(len(pongs), 'pong')} for {_count(len(want), 'ping')} (5.5.2: MUST answer)"
        elif len(pongs) > len(want):
            return FAIL, f"{len(pongs)} pongs for {len(want)} ping{'s' if len(want) != 1 else ''}"
        else:
            return FAIL, "a pong's payload differs from its ping's (5.5.3: MUST be identical)"
    summary = _summary(got, pongs)
    if server_close is None:
        if obs.tcp_end == GAVE_UP:
            return FAIL, f"{summary}no answer to the close frame within {case.react_s:g} s"
        return FAIL, f"{summary}dropped TCP instead of answering the close frame (5.5.1: MUST send a close frame)"
    code = server_close[1].close_code()
    if coalesced:
        return NON_STRICT, (f"{summary}answered only some of {len(want)} pings, the latest included (5.5.3 MAY); "
                            f"close {_code(code)}")
    if code in case.expect.close_reply:
        return STRICT, f"{summary}answered the close with {_code(code)}"
    if code is None or sendable(code):
        want_codes = " or ".join(_code(c) for c in case.expect.close_reply)
        return NON_STRICT, f"{summary}answered the close with {_code(code)}, not {want_codes} (5.5.1: typically echoes)"
    return FAIL, f"{summary}answered the close with {_code(code)}, which must never be sent (7.4.1)"


def _informational(obs: ServerObservation) -> tuple[str, str]:
    got = obs.messages()
    parts = [f"echoed {len(got)} message{'s' if len(got) != 1 else ''}"] if got else []
    server_close = obs.server_close()
    if server_close is not None:
        t, f = server_close
        parts.append(f"{'closed' if obs.server_started_close() else 'answered the close with'} {_code(f.close_code())}"
                     f"{_reason(f.close_reason())}")
    elif obs.server_dropped:
        parts.append(f"dropped TCP without a close frame after {_ms(obs.tcp_end_t)}")
    elif obs.tcp_end == GAVE_UP:
        return FAIL, "no reaction: the connection stayed open"
    return INFORMATIONAL, "; ".join(parts) or "nothing sent"


def compare(got: list[Received], want: list[Msg]) -> str | None:
    """None if the echoes are the expected messages, else what differs first (one line)."""
    for i, m in enumerate(want):
        where = f"message {i + 1}" if len(want) > 1 else "the message"
        if i >= len(got):
            return f"echoed {len(got)} of {len(want)} messages"
        data = m.data
        if got[i].kind != m.kind or len(got[i].data) != len(data):
            return f"{where} came back as {_describe(got[i])}, expected {m.kind} of {len(data)} bytes"
        if got[i].data != data:
            at = next(j for j, (a, b) in enumerate(zip(got[i].data, data)) if a != b)
            return f"{where} came back changed from byte {at}"
    if len(got) > len(want):
        return f"echoed {len(got)} messages, expected {len(want)}: the extra one is {_describe(got[len(want)])}"
    return None


def _same_prefix(got: list[Received], allowed: list[Msg]) -> bool:
    return len(got) >= len(allowed) and compare(got[:len(allowed)], allowed) is None


def _subsequence(got: list[bytes], want: list[bytes]) -> bool:
    it = iter(want)
    return all(any(g == w for w in it) for g in got)


def _summary(got: list[Received], pongs: list[bytes]) -> str:
    parts = []
    if got:
        frames = sum(r.frames for r in got)
        parts.append(f"echoed {len(got)} message{'s' if len(got) != 1 else ''}"
                     + (f" in {frames} frames" if frames != len(got) else ""))
    if pongs:
        parts.append(f"{len(pongs)} pong{'s' if len(pongs) != 1 else ''}")
    return ", ".join(parts) + "; " if parts else ""


def _count(n: int, what: str) -> str:
    return f"{n} {what}{'s' if n != 1 else ''}"


def _describe(r: Received) -> str:
    return f"{r.kind} of {len(r.data)} bytes"


def _reason(reason: bytes) -> str:
    if not reason:
        return ""
    text = reason.decode("utf-8", "replace")
    return f" '{text[:60]}{'…' if len(text) > 60 else ''}'"


def _ms(t: float | None) -> str:
    return "?" if t is None else f"{t * 1000:.0f} ms"


def _code(code: int | None) -> str:
    return "no code" if code is None else str(code)
