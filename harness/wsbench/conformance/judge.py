"""A verdict per case, from what the peer saw on the wire and what the client reported.

The wire decides what the client did to the connection (its close code, its pongs,
whether it dropped TCP, whether it hung); the client's report (the ``observe`` kind's
events, clients/README.md) decides what reached the application (which messages, and
whether ``open`` fired). See cases.py for what each expectation means.
"""

from __future__ import annotations

import sys
from array import array
from functools import cache
from typing import Any

from ..model import Verdict  # the verdict as the run records it
from .cases import Case, Fault, Message, Pause
from .frames import OPCODE_NAMES
from .peer import Observation, sendable

STRICT, NON_STRICT, FAIL = "strict", "non-strict", "fail"
TOO_BIG_CODES = {1009: "message too big", 1008: "policy violation"}
SAMPLES = 16  # sample points of a message digest (observe kind)
EDGE = 8  # units (text) or bytes (binary) in a digest's head and tail


@cache
def digest(message: Message) -> dict[str, Any]:
    """What the observe kind reports for a delivered message: type, length (UTF-16 code
    units for text, bytes for binary), the first and last EDGE units, and SAMPLES units
    at floor(i * length / SAMPLES). (Cached: the 16 MiB message is judged once per client.)"""
    units: bytes | array[int] = message.data
    if message.kind == "text":
        units = array("H", message.data.decode("utf-8").encode("utf-16-le"))
        if sys.byteorder == "big":
            units.byteswap()
    n = len(units)
    return {"kind": message.kind, "length": n, "head": list(units[:EDGE]), "tail": list(units[max(0, n - EDGE):]),
            "sample": [units[i * n // SAMPLES] for i in range(SAMPLES)] if n else []}


def describe_message(event: dict[str, Any]) -> str:
    kind, n = event.get("kind"), event.get("length")
    head = event.get("head") or []
    if kind == "text":
        shown = "".join(chr(u) if 32 <= u < 127 else "·" for u in head if isinstance(u, int))
        return f"text of {n} units '{shown}{'…' if isinstance(n, int) and n > len(head) else ''}'"
    return f"binary of {n} bytes"


def judge(case: Case, obs: Observation | None, report: dict[str, Any] | None, problem: str | None) -> Verdict:
    """``report``: the client's result line (None if it printed none); ``problem``: why the
    client run itself went wrong, if it did (crash, error line, timeout)."""
    suffix = f" (client: {problem})" if problem else ""
    if obs is None or not obs.connected:
        failed = obs.tls_handshake if obs is not None and obs.tls_handshake else ""
        how = f": the TLS handshake {failed}" if failed.startswith("failed") else ""
        return Verdict(FAIL, f"never connected to the peer{how}" + suffix)
    unmasked = [f for _, f in obs.frames if not f.masked]
    if unmasked:
        return Verdict(FAIL, f"sent an unmasked {OPCODE_NAMES.get(unmasked[0].opcode, 'frame')} frame "
                             "(5.3: a client MUST mask every frame)")
    events = report.get("events") if isinstance(report, dict) else None
    if not isinstance(events, list):
        events = None
    if case.expect.verdict == "fail":
        v = _failing(case, obs, events)
    elif case.expect.verdict == "deliver":
        v = _delivering(case, obs, events, problem, _counted(report))
    else:
        v = _rejecting(obs, events)
    if v.verdict != FAIL and isinstance(report, dict) and events is not None and report.get("timed_out") \
            and not _closed(events):
        return Verdict(FAIL, f"{v.detail} on the wire, but the application saw no close event before the "
                             "client's timeout (a hang)")
    if problem and v.verdict != STRICT and problem not in v.detail:
        return Verdict(v.verdict, v.detail + suffix)
    return v


def _writes(case: Case) -> int:
    """How many steps of the script write (the peer stops writing once the client has closed)."""
    return sum(1 for s in case.steps() if not isinstance(s, (Pause, Fault)))


def _closed(events: list[dict[str, Any]]) -> bool:
    return any(e.get("type") == "close" for e in events)


def _messages(events: list[dict[str, Any]] | None) -> list[dict[str, Any]] | None:
    return None if events is None else [e for e in events if e.get("type") == "message"]


def _ms(t: float | None, since: float | None) -> str:
    if t is None:
        return "?"
    return f"{(t - (since or 0.0)) * 1000:.0f} ms"


def _script_start(obs: Observation) -> float:
    return obs.step_t[0] if obs.step_t else 0.0


def _failing(case: Case, obs: Observation, events: list[dict[str, Any]] | None) -> Verdict:
    allowed = [digest(m) for m in case.expect.messages]
    delivered = _messages(events)
    if delivered is not None:
        extra = delivered[len(allowed):] if _same_prefix(delivered, allowed) else delivered
        if extra:
            return Verdict(FAIL, f"delivered {describe_message(extra[0])}, which it must not")
    closes = obs.closes()
    start = _script_start(obs)
    if closes:
        t, f = closes[0]
        code = f.close_code()
        if code not in case.expect.codes:
            want = " or ".join(map(str, case.expect.codes))
            return Verdict(FAIL, f"closed with {_code(code)}, expected {want}")
        if case.expect.before_end and len(obs.step_t) == _writes(case) > 1 and t >= obs.step_t[-1]:
            return Verdict(NON_STRICT, f"closed {code} only after the message ended ({_ms(t, start)})")
        return Verdict(STRICT, f"closed {code} after {_ms(t, start)}")
    if obs.client_dropped:
        how = "reset" if obs.tcp_end == "client-reset" else "closed"
        return Verdict(NON_STRICT, f"{how} TCP without a close frame after {_ms(obs.tcp_end_t, start)}")
    if obs.gave_up:
        return Verdict(FAIL, f"no reaction within {case.react_s:g} s (the connection stayed open)")
    return Verdict(FAIL, f"the connection ended without a close frame from the client ({obs.tcp_end})")


def _counted(report: dict[str, Any] | None) -> int | None:
    """How many messages the client delivered in all, when its report left events untold
    (the observe kind reports the first 256 events: clients/README.md); else None."""
    if not isinstance(report, dict) or not report.get("events_untold"):
        return None
    counted = report.get("messages")
    return counted if isinstance(counted, int) else None


def _delivering(case: Case, obs: Observation, events: list[dict[str, Any]] | None,
                problem: str | None, counted: int | None = None) -> Verdict:
    """``counted``: the client's count of the messages it delivered, when it reported
    only the first ones (the rest are judged by their number)."""
    closes = obs.closes()
    start = _script_start(obs)
    refused = closes[0][1].close_code() if closes else None
    if case.expect.too_big_ok and refused is not None and refused in TOO_BIG_CODES:
        # before or after our close, which the peer may have written while the client was still reading
        return Verdict(NON_STRICT, f"refused the message with {refused} ({TOO_BIG_CODES[refused]}: a limit of the "
                                   "client's, 7.4.1)")
    if closes and (obs.peer_close_t is None or closes[0][0] < obs.peer_close_t):
        t, f = closes[0]
        return Verdict(FAIL, f"failed the connection on valid input: closed {_code(f.close_code())} "
                             f"after {_ms(t, start)}")
    if obs.client_dropped and obs.peer_close_t is None:
        return Verdict(FAIL, f"dropped TCP on valid input after {_ms(obs.tcp_end_t, start)}")
    delivered = _messages(events)
    if delivered is None:
        return Verdict(FAIL, "the client reported no events" + (f": {problem}" if problem else ""))
    expected = [digest(m) for m in case.expect.messages]
    if counted is not None:  # the first ones told, the rest counted
        if counted != len(expected):
            return Verdict(FAIL, f"delivered {counted} messages, expected {len(expected)}")
        expected = expected[:len(delivered)]
    wrong = compare_messages(delivered, expected)
    if wrong:
        return Verdict(FAIL, wrong)
    pongs = obs.pongs()
    coalesced = case.expect.coalesce and _coalesced(pongs, list(case.expect.pongs))
    for i, want in enumerate(() if coalesced else case.expect.pongs):
        if i >= len(pongs):
            return Verdict(FAIL, f"no pong for the ping of {len(want)} bytes (5.5.2: MUST answer)")
        if pongs[i] != want:
            return Verdict(FAIL, f"the pong's payload differs from the ping's ({len(pongs[i])} bytes, "
                                 f"expected {len(want)}; 5.5.3: MUST be identical)")
    n_got = counted if counted is not None else len(delivered)
    got = f"{n_got} message{'s' if n_got != 1 else ''}" if n_got else ""
    if case.expect.pongs:
        n = len(pongs) if coalesced else len(case.expect.pongs)
        got += (", " if got else "") + f"{n} pong{'s' if n > 1 else ''}"
    if not closes:
        if obs.gave_up:
            return Verdict(FAIL, f"no answer to the close frame within {case.react_s:g} s")
        return Verdict(FAIL, "dropped TCP instead of answering the close frame (5.5.1: MUST send a close "
                             "frame in response)")
    code = closes[0][1].close_code()
    prefix = f"delivered {got}; " if got else ""
    if code in case.expect.close_reply and coalesced:
        return Verdict(NON_STRICT, f"{prefix}answered the close with {_code(code)}, but only {len(pongs)} of the "
                                   f"{len(case.expect.pongs)} pings (5.5.3: it MAY answer only the latest)")
    if code in case.expect.close_reply:
        return Verdict(STRICT, f"{prefix}answered the close with {_code(code)}")
    if code is None or sendable(code):
        want = " or ".join(_code(c) for c in case.expect.close_reply)
        return Verdict(NON_STRICT, f"{prefix}answered the close with {_code(code)}, not {want} "
                                   "(5.5.1: typically echoes the code)")
    return Verdict(FAIL, f"{prefix}answered the close with {_code(code)}, which must never be sent (7.4.1)")


def _coalesced(pongs: list[bytes], pings: list[bytes]) -> bool:
    """Fewer pongs than pings, in order, the last ping's among them (5.5.3: an endpoint MAY
    answer only the most recent of the pings it has not answered yet)."""
    if not pongs or len(pongs) >= len(pings) or pongs[-1] != pings[-1]:
        return False
    rest = iter(pings)
    return all(any(p == q for q in rest) for p in pongs)


def _rejecting(obs: Observation, events: list[dict[str, Any]] | None) -> Verdict:
    if events is not None and any(e.get("type") == "open" for e in events):
        return Verdict(FAIL, "opened despite the wrong Sec-WebSocket-Accept")
    delivered = _messages(events)
    if delivered:
        return Verdict(FAIL, f"delivered {describe_message(delivered[0])} on a connection that never opened")
    others = obs.others()
    if others:
        return Verdict(FAIL, f"sent a {OPCODE_NAMES.get(others[0].opcode, 'reserved')} frame on a connection "
                             "that never opened")
    if obs.closes():
        return Verdict(NON_STRICT, "sent a close frame on a connection that never opened, then closed")
    if obs.client_dropped:
        return Verdict(STRICT, f"never opened; dropped TCP after {_ms(obs.tcp_end_t, 0.0)}")
    return Verdict(FAIL, "the connection stayed open")


def _same_prefix(delivered: list[dict[str, Any]], allowed: list[dict[str, Any]]) -> bool:
    return len(delivered) >= len(allowed) and compare_messages(delivered[:len(allowed)], allowed) is None


def compare_messages(delivered: list[dict[str, Any]], expected: list[dict[str, Any]]) -> str | None:
    """None if the deliveries match, else what differs first (one line)."""
    for i, want in enumerate(expected):
        if i >= len(delivered):
            return f"delivered {len(delivered)} of {len(expected)} messages"
        got = delivered[i]
        where = f"message {i + 1}" if len(expected) > 1 else "the message"
        if got.get("kind") != want["kind"] or got.get("length") != want["length"]:
            return f"{where} arrived as {describe_message(got)}, expected {describe_message(want)}"
        for part in ("head", "tail", "sample"):
            if got.get(part) != want[part]:
                return f"{where} has the right type and length but differs in its {part}"
    if len(delivered) > len(expected):
        return f"delivered {len(delivered)} messages, expected {len(expected)}"
    return None


def _code(code: int | None) -> str:
    return "no code" if code is None else str(code)
