"""What the programs of a ``wsbench run`` check of RFC 6455 (issue 31): each server's and
client's conformance summary, recorded with the run (model/program_checks.py), so that
the ranked tables can say when a runtime is fast because it checks less.

One concern per module: ``origins`` (``--conformance``: results files of ``wsbench
conformance`` given or found, and whether they hold the same program versions),
``quick`` (the quick subset of UTF-8 and masking cases, played at verify time against
each server the run measures and each client) and ``summaries`` (the summaries and the
verdicts behind them, written into the run). The checks themselves: ``rfc_checks``.
"""
