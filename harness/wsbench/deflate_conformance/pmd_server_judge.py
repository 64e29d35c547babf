"""Two verdicts per server and permessage-deflate case, as server_conformance judges them
(server_judge.py: the verdict and the close behaviour), once compression is accounted for:

1. the answer to the offer (RFC 7692 5, 7.1): a valid offer may be accepted (the answer
   must then be a valid answer to it: pmd.answer_problem) or declined; an invalid offer
   must be declined: 101 without permessage-deflate is strict, refusing the upgrade
   non-strict, accepting it fails;
2. what the server sent, inflated: each compressed message (RSV1 on its first frame)
   inflated with the window the server agreed to and its context takeover (a distance
   beyond the window, or a stream continued where the server gave up context takeover,
   does not inflate: fail), RSV1 on a continuation frame fails (6); then the
   RFC 6455 judge on the inflated messages;
3. a valid offer declined: the verdicts of the negotiation and message cases are
   informational (nothing compressed was tested); the bomb closed with another code
   than 1009 (or TCP dropped) is non-strict."""

from __future__ import annotations

import zlib
from dataclasses import replace

from ..conformance.frames import BINARY, CONT, TEXT, ClientFrame
from ..model import ServerVerdict
from ..server_conformance.replies import ServerObservation
from ..server_conformance.server_judge import (FAIL, INFORMATIONAL, NON_STRICT, STRICT, close_behaviour,
                                               judge as judge_rfc6455)
from .pmd_client_cases import LIMITS, MESSAGES, NEGOTIATION
from .pmd import NAME, RSV1, Agreement, Inflater, TooBig, answer_problem, offer_problem, parse
from .pmd_server_cases import DeflateServerCase

INFLATED_LIMIT = 64 << 20  # the echo contract's largest message


def judge(case: DeflateServerCase, obs: ServerObservation) -> ServerVerdict:
    observed = {**obs.to_json(), "offer": case.offer}
    if obs.handshake is not None:
        refused = obs.handshake.startswith("answered the upgrade with")
        if refused and not case.valid_offer:
            return ServerVerdict(NON_STRICT, f"refused the upgrade ({obs.handshake[26:]}) instead of declining the "
                                             "offer (RFC 7692 5: answer without the extension)", NON_STRICT,
                                 "never upgraded", observed)
        return ServerVerdict(FAIL, f"the upgrade failed: {obs.handshake}", FAIL, "never upgraded", observed)
    answer = parse(obs.extensions)
    if answer is None:
        return _fail(obs, observed, f"an answer that is not the header's grammar: {obs.extensions!r} (RFC 6455 9.1)")
    offered = (parse(case.offer) or [])[0] if case.offer else None
    accepted = any(e.name == NAME for e in answer)
    if not case.valid_offer and accepted:
        why = offer_problem(offered) if offered else "?"
        return _fail(obs, observed, f"accepted an invalid offer ({why}) with '{obs.extensions}' (7.1: MUST decline)")
    problem = answer_problem(offered, answer)
    if problem:
        return _fail(obs, observed, f"answered '{obs.extensions}': {problem}")
    agreed = Agreement.of(answer[0]) if accepted else None
    inflated, problem = inflate(obs, agreed)
    if problem:
        return _fail(obs, observed, problem)
    v = judge_rfc6455(case, inflated)
    v = replace(v, observed=observed)
    said = f"answered '{obs.extensions}'; " if accepted else "declined the offer; " if case.valid_offer else ""
    if case.valid_offer and not accepted and case.group in (NEGOTIATION, MESSAGES):
        return replace(v, verdict=INFORMATIONAL if v.verdict != FAIL else FAIL,
                       detail=f"declined the offer (RFC 7692 5 permits it; nothing compressed was tested): {v.detail}")
    if case.group == LIMITS and v.verdict == FAIL and v.detail.startswith("closed with "):
        return replace(v, verdict=NON_STRICT, detail=f"{said}{v.detail} (failed the connection, but not with 1009)")
    return replace(v, detail=said + v.detail)


def _fail(obs: ServerObservation, observed: dict[str, object], detail: str) -> ServerVerdict:
    close, close_detail = close_behaviour(obs)
    return ServerVerdict(FAIL, detail, close, close_detail, observed)


def inflate(obs: ServerObservation, agreed: Agreement | None) -> tuple[ServerObservation, str | None]:
    """``obs`` with every compressed message of the server's as one uncompressed frame
    (when its last frame came), or why the server's frames cannot be inflated."""
    if agreed is None:
        return obs, None  # RSV1 from a server that declined: server_judge's "RSV bits ... none negotiated"
    inflater = Inflater(agreed.server_max_window_bits, not agreed.server_no_context_takeover)
    frames: list[tuple[float, ClientFrame]] = []
    parts: list[bytes] = []
    first: ClientFrame | None = None
    for t, f in obs.frames:
        if f.opcode == CONT and f.rsv & RSV1:
            return obs, "sent RSV1 on a continuation frame (6: on a message's first frame only)"
        if f.opcode in (TEXT, BINARY):
            first, parts = (f if f.rsv & RSV1 else None), []
        if first is None or f.opcode not in (TEXT, BINARY, CONT):
            frames.append((t, f))
            continue
        parts.append(f.payload)
        if f.fin:
            try:
                data = inflater.message(b"".join(parts), INFLATED_LIMIT)
            except (zlib.error, TooBig) as exc:
                return obs, (f"sent a compressed {'text' if first.opcode == TEXT else 'binary'} that does not "
                             f"inflate with the agreed window of {agreed.server_max_window_bits} bits"
                             f"{' and no context takeover' if agreed.server_no_context_takeover else ''}: {exc}")
            frames.append((t, replace(first, fin=True, rsv=first.rsv & ~RSV1, payload=data)))
            first = None
    return replace(obs, frames=frames), None


__all__ = ["STRICT", "judge"]
