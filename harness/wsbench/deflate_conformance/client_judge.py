"""A verdict per client and permessage-deflate case: conformance/judge.py's, from the
same observation and report (the expectations mean what they mean there), with what
compression adds:

- the client must have offered permessage-deflate (RFC 7692 5: a server answers an
  offer; a client that offered nothing cannot be judged on an answer): fail otherwise;
- client_max_window_bits in the answer is valid only where the client offered it
  (7.1.2.2): the case that answers it offered (``OFFERED``) is judged as ``deliver``
  where the client offered it and informational where it did not; the case that
  answers it unoffered (``UNOFFERED``) as ``reject`` where it did not offer it and
  informational where it did (every client that always offers it);
- the bomb: a close 1009 is strict; failing the connection otherwise (another close
  code, TCP dropped) is non-strict; delivering it, or no reaction within its time, fails.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ..conformance.cases import Case, Expect, delivers, text
from ..conformance.judge import FAIL, NON_STRICT, STRICT, judge as judge_rfc6455
from ..conformance.observation import Observation
from ..model import Verdict
from .client_cases import NEVER, OFFERED, UNOFFERED
from .pmd import NAME, parse

INFORMATIONAL = "informational"


def offer(obs: Observation | None) -> str | None:
    """The client's Sec-WebSocket-Extensions, as it offered it (None: no such header)."""
    return obs.request.get("sec-websocket-extensions") if obs is not None else None


def offers_window_bits(obs: Observation | None) -> bool:
    parsed = parse(offer(obs)) or []
    return any(e.name == NAME and e.has("client_max_window_bits") for e in parsed)


def judge(case: Case, obs: Observation | None, report: dict[str, Any] | None, problem: str | None) -> Verdict:
    """The verdict of ``case`` (client_cases.py) from what the peer saw and the client said."""
    if obs is not None and obs.connected and case.extensions is not None:
        parsed = parse(offer(obs)) or []
        if not any(e.name == NAME for e in parsed):
            return Verdict(FAIL, f"offered no permessage-deflate (Sec-WebSocket-Extensions: {offer(obs)!r}): "
                                 "the client's deflate switch did not take")
    if case.id in (OFFERED, UNOFFERED) and obs is not None and obs.connected:
        offered = offers_window_bits(obs)
        if (case.id == OFFERED) != offered:
            v = judge_rfc6455(replace(case, expect=_flipped(case)), obs, report, problem)
            said = "offered" if offered else "did not offer"
            return Verdict(INFORMATIONAL, f"the client {said} client_max_window_bits ({offer(obs)!r}), so the "
                                          f"answer is {'valid' if offered else 'invalid'} here: {v.verdict}: "
                                          f"{v.detail}")
    v = judge_rfc6455(case, obs, report, problem)
    if case.heavy and case.expect.verdict == "fail" and v.verdict == FAIL and v.detail.startswith("closed with "):
        return Verdict(NON_STRICT, f"{v.detail} (failed the connection, but not with 1009)")
    return v


def _flipped(case: Case) -> Expect:
    """What the answer of a client_max_window_bits case asks of a client whose offer says
    otherwise than the case assumes."""
    if case.expect.verdict == "reject":
        return delivers(text(NEVER))
    return Expect("reject")


__all__ = ["INFORMATIONAL", "STRICT", "judge"]
