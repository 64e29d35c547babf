"""A verdict per client and permessage-deflate case: conformance/judge.py's, from the
same observation and report (the expectations mean what they mean there), with what
compression adds:

- the client must have offered permessage-deflate (RFC 7692 5: a server answers an
  offer; a client that offered nothing cannot be judged on an answer): fail otherwise;
- whether an answer is valid depends on the offer it answers (7.1: client_max_window_bits
  only where the client offered it, server_no_context_takeover wherever the client
  offered it): a case whose answer is valid for the client's own offer where the case
  takes it for invalid, or the other way round, is judged the other way (``reject``
  against ``deliver``) and is informational, with that verdict in its detail (e.g. the
  answer with client_max_window_bits for a client that always offers it);
- a valid answer refused (never opened, nothing sent) is non-strict: RFC 7692 7 lets a
  client fail the connection on "a configuration it does not support";
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
from .pmd_client_cases import NEVER
from .pmd import NAME, Extension, answer_problem, parse

INFORMATIONAL = "informational"


def offer(obs: Observation | None) -> str | None:
    """The client's Sec-WebSocket-Extensions, as it offered it (None: no such header)."""
    return obs.request.get("sec-websocket-extensions") if obs is not None else None


def judge(case: Case, obs: Observation | None, report: dict[str, Any] | None, problem: str | None) -> Verdict:
    """The verdict of ``case`` (pmd_client_cases.py) from what the peer saw and the client said."""
    if obs is not None and obs.connected and case.extensions is not None:
        parsed = parse(offer(obs)) or []
        if not any(e.name == NAME for e in parsed):
            return Verdict(FAIL, f"offered no permessage-deflate (Sec-WebSocket-Extensions: {offer(obs)!r}): "
                                 "the client's deflate switch did not take")
    valid = answer_valid(case, obs)
    if valid is not None and valid != (case.expect.verdict != "reject"):
        v = _worded(case, judge_rfc6455(replace(case, expect=_flipped(case)), obs, report, problem))
        why = "" if valid else f" ({answer_problem(_offered(obs), parse(case.extensions) or [])})"
        return Verdict(INFORMATIONAL, f"the answer is {'valid' if valid else 'invalid'} for the client's offer "
                                      f"{offer(obs)!r}{why}, so judged as such: {v.verdict}: {v.detail}")
    v = _worded(case, judge_rfc6455(case, obs, report, problem))
    if case.expect.verdict == "deliver" and v.verdict == FAIL and not _opened(report) and obs is not None \
            and not obs.frames:
        return Verdict(NON_STRICT, f"never opened: refused the answer '{case.extensions}', valid for its offer "
                                   f"{offer(obs)!r} (RFC 7692 7: a client may refuse a configuration it does not "
                                   f"support); on the wire: {v.detail}")
    if case.heavy and case.expect.verdict == "fail" and v.verdict == FAIL and v.detail.startswith("closed with "):
        return Verdict(NON_STRICT, f"{v.detail} (failed the connection, but not with 1009)")
    return v


def _offered(obs: Observation | None) -> Extension | None:
    return next((e for e in parse(offer(obs)) or [] if e.name == NAME), None)


def answer_valid(case: Case, obs: Observation | None) -> bool | None:
    """Whether the case's answer is a valid answer to the client's own offer (None: the
    peer declines, or the client offered nothing: nothing to tell)."""
    if case.extensions is None or obs is None or not obs.connected:
        return None
    answer, offered = parse(case.extensions), _offered(obs)
    if offered is None:
        return None
    return answer is not None and answer_problem(offered, answer) is None


def _opened(report: dict[str, Any] | None) -> bool:
    events = report.get("events") if isinstance(report, dict) else None
    return not isinstance(events, list) or any(isinstance(e, dict) and e.get("type") == "open" for e in events)


def _worded(case: Case, v: Verdict) -> Verdict:
    """The RFC 6455 judge's words for an answer refused, about this room's answers."""
    return replace(v, detail=v.detail.replace("the wrong Sec-WebSocket-Accept", f"the answer '{case.extensions}'"))


def _flipped(case: Case) -> Expect:
    """What the answer of a client_max_window_bits case asks of a client whose offer says
    otherwise than the case assumes."""
    if case.expect.verdict == "reject":
        return delivers(text(NEVER))
    return Expect("reject")


__all__ = ["INFORMATIONAL", "STRICT", "judge"]
