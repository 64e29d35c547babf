"""``wsbench conformance``: a raw-frame RFC 6455 peer, the case table, the judge and the
runner that plays every case against every client (README.md, "Conformance").

One concern per module: ``frames`` (the wire format, both directions), ``cases`` (the
case table, as data), ``peer`` (the asyncio server that plays a case and records what the
client does), ``judge`` (a verdict per case), ``runner`` (every client x case) and
``report`` (the table, from the results file alone).
"""
