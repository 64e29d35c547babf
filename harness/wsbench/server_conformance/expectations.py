"""What a server case is (``ServerCase``), what a strict server does (``Expect``), and the
constructors the shared case shapes (conformance/framing_cases.py, payload_cases.py) build
the server cases with (server_cases.py gathers them).

The server cases, as data: what the client writes and what a strict server does.

Written from RFC 6455 and from Autobahn|Testsuite's public case descriptions (facts only;
grouped by Autobahn's sections: 1 framing, 2 pings and pongs, 3 reserved bits, 4 opcodes,
5 fragmentation, 6 UTF-8, 7 closing, 9 limits, 10 auto-fragmentation). Where the RFC gives
the shape, cases are generated from tables: every length form, every RSV bit on every
frame kind, every reserved opcode, every close code, every UTF-8 sequence of conformance/utf8.py
whole and one byte per fragment, and a text split at every byte position.

Expectations (``Expect.kind``):

- ``echo``: valid input. Strict: every message echoed whole and in order (the echo
  contract, servers/README.md; however the server fragments it), every ping answered by
  a pong with its payload (5.5.3), nothing else sent, and our closing close frame
  answered with one of ``close_reply`` (5.5.1 "typically echos the status code").
  Non-strict: the close answered with another valid code, or pongs coalesced (5.5.3
  MAY answer only the latest ping). ``too_big_ok``: refusing the message with 1009
  (message too big) or 1008 (policy violation: a limit of the server's, e.g. ws's 16,384
  fragments per message), 7.4.1, is informational. Fail: anything else.
- ``fail``: the server must _Fail the WebSocket Connection_ (7.1.7). Strict: a close frame
  with one of ``codes`` (1002 protocol error, 1007 invalid data: 7.4.1), nothing echoed
  that must not be (``messages`` may be echoed before). Non-strict: TCP dropped without
  a close frame (7.1.7 "SHOULD" send one), or with ``before_end`` the close only after
  the script's last step (8.1: fail fast). Fail: another code, an echo of what is
  invalid, no reaction.
- ``info``: the RFC leaves the answer open (Autobahn's INFORMATIONAL): what the server
  did is recorded; only a hang or a frame a server must never send fails.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Literal

from ..conformance.script import (GROUPS, HEAVY_REACT_S, INVALID_DATA, POLICY, PROTOCOL_ERROR, REACT_S, TOO_BIG,
                                  Message, Pause, Step)

Msg = Message  # a message the server must echo: its kind and bytes (a function builds a big one)
LIMIT_CODES = {TOO_BIG: "message too big", POLICY: "policy violation, e.g. a limit on fragments"}
__all__ = ["GROUPS", "HEAVY_REACT_S", "INVALID_DATA", "LIMIT_CODES", "Msg", "PROTOCOL_ERROR", "REACT_S", "Expect",
           "ServerCase", "echo", "fails", "info"]


@dataclass(frozen=True)
class Expect:
    kind: Literal["echo", "fail", "info"]
    messages: tuple[Msg, ...] = ()  # echo: in order; fail: may be echoed before the failure; info: awaited
    pongs: tuple[bytes, ...] = ()  # echo: the payloads the server's pongs must carry, in order
    close_reply: tuple[int | None, ...] = (1000,)  # echo: strict answers to our close (None: no code)
    codes: tuple[int, ...] = ()  # fail: the close codes a strict server sends
    before_end: bool = False  # fail: strict only if the close comes before the script's last step
    too_big_ok: bool = False  # echo: a close 1009 or 1008 (a limit of the server's) is informational
    coalesce: bool = False  # echo: pongs for only the latest of several pings are non-strict
    open_question: str = ""  # info: what the RFC leaves open

    def describe(self) -> str:
        """One line: what a strict server does."""
        if self.kind == "fail":
            codes = " or ".join(map(str, self.codes))
            return f"close {codes}" + (" before the message ends" if self.before_end else "")
        if self.kind == "info":
            return f"informational: {self.open_question}"
        parts = []
        if self.messages:
            n = len(self.messages)
            parts.append(f"echo {n} message{'s' if n != 1 else ''}")
        if self.pongs:
            parts.append(f"pong {len(self.pongs)}")
        replies = ["empty" if c is None else str(c) for c in self.close_reply]
        parts.append("answer the close with " + " or ".join(replies))
        return ", ".join(parts)


@dataclass(frozen=True)
class ServerCase:
    id: str
    group: str  # a key of GROUPS (Autobahn's section number)
    section: str  # of RFC 6455
    title: str  # what the client sends
    build: Callable[[], tuple[Step, ...]] = field(repr=False, compare=False)
    expect: Expect
    why: str  # the RFC's rule, in a sentence, starting with its section
    react_s: float = REACT_S
    heavy: bool = False  # megabytes: played one at a time
    offer: str | None = None  # the upgrade's Sec-WebSocket-Extensions offer (deflate_conformance/; None: none)

    def steps(self) -> tuple[Step, ...]:
        return self.build()

    def steps_for(self, answer: str | None) -> tuple[Step, ...]:
        """The steps once the server answered the ``offer`` with ``answer`` (its
        Sec-WebSocket-Extensions, None: none); a case whose script depends on it says so."""
        return self.steps()

    def script_seconds(self) -> float:
        return sum(s.seconds for s in self.steps() if isinstance(s, Pause))

    def to_json(self) -> dict[str, object]:
        return {"id": self.id, "section": self.section, "group": f"{self.group} {GROUPS[self.group]}",
                "title": self.title, "expect": self.expect.kind, "strict": self.expect.describe(), "why": self.why}


def echo(*messages: Msg, pongs: tuple[bytes, ...] = (), close_reply: tuple[int | None, ...] = (1000,),
         **kw: object) -> Expect:
    return Expect("echo", messages=messages, pongs=pongs, close_reply=close_reply, **kw)  # type: ignore[arg-type]


def fails(*codes: int, messages: tuple[Msg, ...] = (), before_end: bool = False) -> Expect:
    return Expect("fail", codes=codes or (PROTOCOL_ERROR,), messages=messages, before_end=before_end)


def info(question: str, *awaited: Msg) -> Expect:
    """``awaited``: the echoes a server that accepts the input sends, which the client waits
    for before its close (so that the answer is not a race against the close)."""
    return Expect("info", open_question=question, messages=awaited)
