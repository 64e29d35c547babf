"""A verdict per TLS-failure case (tls_cases.py), from what the peer saw of the TLS
session and the WebSocket, and what the client's application saw (its observe events).

- ``refuse`` (a certificate the client must not accept): strict: no TLS handshake
  completed, no upgrade request, no ``open`` and no message; ``error``, then ``close``
  1006 with ``wasClean`` false. Non-strict: the same, but the close carries 1015 (RFC 6455
  7.4.1 reserves it for "a failure to perform a TLS handshake", for APIs to report).
  Fail: anything else (the certificate accepted, the connection opened, no ``error``,
  another code, a clean close, no ``close`` at all).
- ``fault`` (the TLS session ends in the middle of a message): strict: every complete
  message delivered and the partial one not, then ``error`` and ``close`` 1006 with
  ``wasClean`` false. Non-strict: no ``error`` where the case has it optional (a
  close_notify). Fail: a message lost, changed or too many, no ``error`` after a TLS
  error, an ``error`` after the ``close``, another code, a clean close, no ``close``,
  or a close frame sent before the fault.
"""

from __future__ import annotations

from typing import Any

from ..model import Verdict
from .cases import Case
from .judge import FAIL, NON_STRICT, STRICT, compare_messages, digest, describe_message
from .peer import Observation

TLS_HANDSHAKE_FAILURE = 1015  # RFC 6455 7.4.1: reported by APIs, never sent
ABNORMAL = 1006


def judge_tls(case: Case, obs: Observation | None, report: dict[str, Any] | None, problem: str | None) -> Verdict:
    """The verdict of a ``refuse`` or ``fault`` case; ``report`` and ``problem`` as for
    judge.judge."""
    suffix = f" (client: {problem})" if problem else ""
    if obs is None or obs.tls_handshake is None:
        return Verdict(FAIL, "never connected to the peer" + suffix)
    events = report.get("events") if isinstance(report, dict) else None
    if not isinstance(events, list):
        return Verdict(FAIL, "the client reported no events" + (f": {problem}" if problem else ""))
    v = _refusing(obs, events) if case.expect.verdict == "refuse" else _faulted(case, obs, events)
    if problem and v.verdict != STRICT and problem not in v.detail:
        return Verdict(v.verdict, v.detail + suffix)
    return v


def _types(events: list[dict[str, Any]]) -> list[str]:
    return [str(e.get("type")) for e in events]


def _ending(events: list[dict[str, Any]]) -> tuple[str | None, str]:
    """What is wrong with how the application learnt of the end (None: nothing; else
    FAIL or NON_STRICT), and the end in words: ``error 'why', then close 1006 (not clean)``."""
    types = _types(events)
    if "close" not in types:
        return FAIL, "no close event (a hang in the application)"
    close = events[types.index("close")]
    code, clean = close.get("code"), close.get("wasClean")
    error_at = types.index("error") if "error" in types else None
    said = ""
    if error_at is not None:
        message = str(events[error_at].get("message") or "").strip()
        said = f"error{f' {message[:100]!r}' if message else ''}, then "
    words = f"{said}close {code}{' (clean)' if clean else ' (not clean)' if clean is False else ''}"
    if error_at is not None and error_at > types.index("close"):
        return FAIL, f"close {code}, then an error event after it"
    if clean is not False:
        return FAIL, words + ": wasClean must be false without a closing handshake"
    if code != ABNORMAL:
        return (NON_STRICT if code == TLS_HANDSHAKE_FAILURE else FAIL), words
    return None, words


def _refusing(obs: Observation, events: list[dict[str, Any]]) -> Verdict:
    handshake = obs.tls_handshake or "?"
    types = _types(events)
    if "open" in types:
        return Verdict(FAIL, "opened the connection despite the certificate")
    if obs.connected:
        return Verdict(FAIL, "sent its upgrade request over TLS with a certificate it must refuse")
    if handshake == "done":
        return Verdict(FAIL, "completed the TLS handshake with a certificate it must refuse")
    if "message" in types:
        return Verdict(FAIL, "delivered a message on a connection that never opened")
    wrong, words = _ending(events)
    on_wire = f"; on the wire: {handshake.removeprefix('failed: ')}"
    if wrong == FAIL:
        return Verdict(FAIL, f"refused the certificate, but: {words}{on_wire}")
    if "error" not in types:
        return Verdict(FAIL, f"refused the certificate, but no error event before: {words}{on_wire}")
    if wrong == NON_STRICT:
        return Verdict(NON_STRICT, f"never opened; {words}: 1015 instead of 1006 (RFC 6455 7.4.1 names 1015 "
                                   f"for a failed TLS handshake){on_wire}")
    return Verdict(STRICT, f"never opened; {words}{on_wire}")


def _faulted(case: Case, obs: Observation, events: list[dict[str, Any]]) -> Verdict:
    if not obs.connected:
        return Verdict(FAIL, f"never sent its upgrade request (TLS handshake: {obs.tls_handshake})")
    types = _types(events)
    if "open" not in types:
        return Verdict(FAIL, "never opened")
    closes = obs.closes()
    if closes and (obs.fault_t is None or closes[0][0] < obs.fault_t):
        return Verdict(FAIL, f"sent a close frame ({closes[0][1].close_code()}) before the fault, on valid input")
    if obs.fault is None:
        return Verdict(FAIL, f"the peer could not play the fault (the connection ended first: {obs.tcp_end})")
    expected = [digest(m) for m in case.expect.messages]
    delivered = [e for e in events if e.get("type") == "message"]
    n = len(expected)
    count = f"{min(len(delivered), n)} of {n} messages"
    if len(delivered) > n and compare_messages(delivered[:n], expected) is None:
        return Verdict(FAIL, f"delivered {count}, then {describe_message(delivered[n])} after the fault "
                             "(part of a message)")
    wrong = compare_messages(delivered, expected)
    if wrong:
        return Verdict(FAIL, f"{wrong} (the {n} complete before the fault are due)")
    problem, words = _ending(events)
    if problem is not None:
        return Verdict(FAIL, f"delivered {count}; {words}")
    if "error" not in types:
        if case.expect.error_required:
            return Verdict(FAIL, f"delivered {count}; {words}, without an error event (the fault is a TLS error)")
        return Verdict(NON_STRICT, f"delivered {count}; {words}, without an error event (RFC 6455 7.2.1: a lost "
                                   "transport fails the connection)")
    return Verdict(STRICT, f"delivered {count}, none after; {words}")
