"""``wsbench conformance --servers``: the servers held to RFC 6455 (issue 31). A room of its
own beside ``conformance/`` (the clients' table), which it imports one way only: the frame
writer and reader (``conformance.frames``), and the case shapes both directions share
(``conformance.framing_cases``, ``payload_cases``, ``utf8``, ``script``), plus the server
start (``server.py``) and the results model.

A raw-byte asyncio client (no WebSocket library) plays every case against every server
and records everything the server sends back; each case is judged twice: the verdict
(S strict, n non-strict, F fail, I informational where the RFC leaves the answer open)
and the close behaviour (a clean closing handshake with the server closing TCP first,
RFC 6455 7.1.1). docs/server-conformance.md has the rules.

One concern per module: ``steps`` (what a case writes: masked frames, chopped writes,
pauses, our close), ``expectations`` (what a case is and what a strict server does),
``server_cases`` (the shared shapes made server cases, the quick subset, choosing
cases), ``replies`` (what the server sent back, as the client saw it), ``raw_client``
(one connection playing one case), ``server_judge`` (the two verdicts),
``server_schedule`` (every server x case: start, play, stop), ``server_checks`` (what
each server checks, from its verdicts) and ``server_tables`` (the report's sections,
from the results file alone).
"""
