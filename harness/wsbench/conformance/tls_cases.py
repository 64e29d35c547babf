"""The TLS-failure set (``wsbench conformance --tls``), as data, and choosing cases.

Each case has a listener of its own (a port per client run: clients connect to
127.0.0.1, so no SNI tells connections apart) that presents ``certificate``:

- ``refuse``: a certificate the client must not accept (build/tls/: signed by a CA it does
  not trust, for another host name, expired). Strict: the connection never opens, the
  TLS handshake never completes and no upgrade request is sent; the application sees
  ``error``, then ``close`` with 1006 and ``wasClean`` false (WHATWG WebSockets: a
  connection that cannot be established is failed: error, then close 1006).
- ``fault``: the right certificate; after MESSAGES (complete) and part of the next
  message's frames the peer ends the TLS session (cases.Fault): TCP closed without
  close_notify, a fatal alert from its TLS stack, or close_notify — never a WebSocket
  close. Strict: exactly MESSAGES delivered, then ``error`` and ``close`` 1006, not
  clean. A truncation and an alert are TLS errors: no ``error`` is a fail; after a
  close_notify the error is what RFC 6455 7.2.1 asks for (the transport was lost
  without a closing handshake: _Fail the WebSocket Connection_), but the TLS session
  ended in order: no ``error`` is non-strict.
"""

from __future__ import annotations

from . import cases
from .cases import Case, Expect, Fault, Pause, Step, binary, closing, frame, pattern, text
from .frames import BINARY, CONT, TEXT

GROUP = "tls-failure"
MESSAGES = (text("one, before the fault"), binary(pattern(3000, 31)), text("three: € 😀, before the fault"))
SETTLE_BEFORE_FAULT_S = 0.2  # the partial message has been read before the fault comes


def _faulting(kind: str) -> tuple[Step, ...]:
    """The complete messages, then the first fragment of a text message and half of its
    second frame, then the fault."""
    whole = tuple(frame(TEXT if m.kind == "text" else BINARY, m.data) for m in MESSAGES)
    second = frame(CONT, b"never delivered, the message does not end", fin=False)
    partial = frame(TEXT, b"the partial message", fin=False) + second[:len(second) // 2]
    return (*whole, Pause(0.1), partial, Pause(SETTLE_BEFORE_FAULT_S), Fault(kind))


def _trusted_by_mistake() -> tuple[Step, ...]:
    """What a client that accepts the certificate gets: a message it must never see."""
    return (frame(TEXT, b"this server's certificate must have been refused"), closing())


def _refuse(case_id: str, certificate: str, section: str, title: str, why: str) -> Case:
    return Case(case_id, section, GROUP, title, _trusted_by_mistake, Expect("refuse"), why, certificate=certificate)


def _fault(case_id: str, kind: str, section: str, title: str, why: str, error_required: bool = True) -> Case:
    return Case(case_id, section, GROUP, title, lambda: _faulting(kind),
                Expect("fault", messages=MESSAGES, error_required=error_required), why, certificate="server")


TLS_CASES: tuple[Case, ...] = (
    _refuse("tls-untrusted-ca", "untrusted", "5280 6.1", "a certificate signed by a CA the client does not trust",
            "RFC 5280 6.1: no path to a trust anchor, the certificate is not valid; WHATWG WebSockets: a "
            "connection that cannot be established fires error, then close 1006"),
    _refuse("tls-wrong-host", "wrong-host", "6125 6", "a certificate for wrong.invalid only (the client asks for "
            "127.0.0.1)", "RFC 6125 6 / RFC 2818 3.1: the reference identity (the IP address) must match the "
            "certificate; else the connection is not established (error, then close 1006)"),
    _refuse("tls-expired", "expired", "5280 4.1.2.5", "a certificate that expired on 2020-01-02",
            "RFC 5280 4.1.2.5 and 6.1.3: outside its validity period a certificate is not valid; the connection "
            "is not established (error, then close 1006)"),
    _fault("tls-truncation", "truncate", "8446 6.1", "3 messages, part of a 4th, then TCP closed without "
           "close_notify", "RFC 8446 6.1: a TCP end without close_notify may be a truncation and is an error; "
           "RFC 6455 7.2.1: a lost transport fails the WebSocket connection: the complete messages only, "
           "error, close 1006"),
    _fault("tls-alert-mid-message", "alert", "8446 6.2", "3 messages, part of a 4th, then a fatal TLS alert "
           "(bad_record_mac) and TCP closed", "RFC 8446 6.2: a fatal alert ends the session at once; the "
           "WebSocket connection is failed (RFC 6455 7.2.1): the complete messages only, error, close 1006"),
    _fault("tls-close-notify", "close-notify", "8446 6.1", "3 messages, part of a 4th, then close_notify and "
           "TCP closed, without a WebSocket close", "RFC 8446 6.1: close_notify ends the TLS session in order, "
           "but RFC 6455 7.1.5/7.2.1: without a closing handshake the connection closed abnormally: the "
           "complete messages only, close 1006 (not clean); error as when the transport is lost",
           error_required=False),
)

TLS_BY_ID: dict[str, Case] = {c.id: c for c in TLS_CASES}


def select(ids: list[str] | None, tls: bool, quick: bool = False) -> list[Case]:
    """The cases named (ids, or shell patterns of the RFC 6455 cases' ids), and the quick
    subset with ``quick``; none named: the RFC 6455 cases (or the quick subset), and with
    ``tls`` the TLS-failure set too. Raises KeyError with an unknown name, ValueError with
    a TLS-failure case named without ``tls``."""
    named = ids or []
    for i in named:
        if i in TLS_BY_ID and not tls:
            raise ValueError(i)
    failures = [c for c in TLS_CASES if c.id in named] if named else list(TLS_CASES) if tls else []
    rfc = [i for i in named if i not in TLS_BY_ID]
    chosen = cases.select(rfc, quick) if rfc or quick or not named else []
    return [*chosen, *failures]
