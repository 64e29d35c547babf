"""``wsbench conformance``: a raw-frame RFC 6455 peer, the case table, the judge and the
schedule that plays every case against every client (docs/conformance.md); with ``--tls``
behind TLS, plus the TLS-failure set. The case shapes here serve the server room too
(server_conformance/ imports this package; this package imports nothing of it).

One concern per module: ``frames`` (the wire format, both directions), ``script`` (what
both directions' cases are made of: steps, messages, payloads, Autobahn's sections, the
``Direction`` that turns a shape into a client or a server case), ``framing_cases`` and
``payload_cases`` (the shapes of Autobahn's sections 1-5 and 6, 7, 9, 10), ``utf8`` (the
UTF-8 sequences, valid and invalid, as data), ``cases`` (the client cases, the quick
subset, choosing cases), ``tls_cases`` (the TLS-failure set, as data, and choosing cases),
``wire`` (the byte stream to a client: plain TCP, or TLS by hand, with its faults),
``peer`` (the asyncio server: listeners, routing, the TLS handshake), ``play`` (one
connection playing one case), ``observation`` (what the peer saw), ``judge`` and
``tls_judge`` (a verdict per case), ``tls_setup`` (certificates and the clients' trust),
``schedule`` (every client x case, a few at a time) and ``tables`` (the tables as report
sections, from the results file alone).
"""
