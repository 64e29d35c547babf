"""``wsbench conformance --deflate`` (and ``--servers --deflate``): permessage-deflate (RFC
7692, issue 32 item 5) held to its rules, a room of its own beside ``conformance/`` (the
clients' RFC 6455 table) and ``server_conformance/`` (the servers'), whose machinery it
plays through, one way only: their frames, peer and raw client, schedules, judges, tables
and the results model; nothing there imports this room.

One concern per module: ``pmd`` (permessage-deflate on the wire: the extension header,
the answer checked against its offer, the agreement, compressing and inflating),
``client_cases`` and ``server_cases`` (each side's cases, as data, with their RFC 7692
sections), ``choose`` (choosing cases, the cases by group), ``client_judge`` and
``server_judge`` (the rooms' judges with compression accounted for), ``schedule`` (who can
compress, n/a for the rest, the rooms' schedules with this room's judges), ``tables``
(the report's sections) and ``command`` (the command line's side). docs/deflate-conformance.md
has the rules.
"""
