"""``wsbench conformance --servers``: the servers held to RFC 6455 (issue 31). A room of its
own beside ``conformance/`` (the clients' table): it shares only the frame writer and
reader (``conformance.frames``), the server start (``server.py``) and the results model.

A raw-byte asyncio client (no WebSocket library) plays every case against every server
and records everything the server sends back; each case is judged twice: the verdict
(S strict, n non-strict, F fail, I informational where the RFC leaves the answer open)
and the close behaviour (a clean closing handshake with the server closing TCP first,
RFC 6455 7.1.1). docs/server-conformance.md has the rules.

One concern per module: ``steps`` (what a case writes: masked frames, chopped writes,
pauses, our close), ``utf8`` (the UTF-8 sequences, valid and invalid, as data),
``expectations`` (what a case is and what a strict server does), ``framing_cases``
(sections 1-5) and ``payload_cases`` (6, 7, 9, 10), generated from tables where the RFC
gives the shape, ``server_cases`` (the table, the quick subset, choosing cases),
``replies`` (what the server sent back, as the client saw it), ``raw_client`` (one
connection playing one case), ``server_judge`` (the two verdicts), ``server_schedule``
(every server x case: start, play, stop), ``server_checks`` (what each server checks,
from its verdicts) and ``server_tables`` (the report's sections, from the results file
alone).
"""
