"""The conformance tables as report sections (Markdown and HTML), from a run's
``conformance`` section alone (so ``wsbench report`` renders any saved run): rows are
cases, columns are clients. A ``--tls`` run has two: the RFC 6455 cases over TLS, and
the TLS-failure set (its cases are those of group ``tls-failure``)."""

from __future__ import annotations

from ..doc import Block, Grid, Section
from ..model import VERDICT_MARKS as MARKS, CaseRecord, Run, Verdict

JUDGED = ("strict", "non-strict", "fail")  # counted per client; "n/a" too where a client has it
TLS_GROUP = "tls-failure"
LEGEND = ("**S** strict: the close code RFC 6455 asks for (for valid input: every message delivered, "
          "every ping ponged, the close answered with its code); **n** non-strict: the connection failed "
          "by dropping TCP without a close frame (RFC 6455 7.1.7 permits it), or a close answered with "
          "another valid code; **F** fail: a wrong code, a message delivered that must not be, a valid "
          "one lost or changed, or no reaction (a hang); **n/a**: the client cannot run over TLS (see "
          "Findings); **–** not run.")
TLS_LEGEND = ("**S** strict: a certificate refused — never opened, no TLS handshake completed, `error` then "
              "`close` 1006 (not clean) —, or after a TLS fault mid-message exactly the complete messages "
              "delivered, then `error` and `close` 1006 (not clean); **n** non-strict: the same with close "
              "1015 for a refused certificate (RFC 6455 7.4.1 reserves it for a failed TLS handshake), or "
              "without `error` after a close_notify (RFC 6455 7.2.1 fails a connection whose transport is "
              "lost; the TLS session itself ended in order); **F** fail: the certificate accepted or the "
              "connection opened, a message lost or one delivered after the fault, no `error` after a TLS "
              "error, another close code, a clean close, or no `close` (a hang); **n/a**: the client "
              "cannot run over TLS; **–** not run.")


def sections(run: Run) -> list[Section]:
    """The RFC 6455 table (cases x clients), its counts and findings, and for a run with
    the TLS-failure set the same for it (none for a run without a conformance section)."""
    section = run.conformance
    if section is None:
        return []
    tls = run.settings.get("tls") if isinstance(run.settings, dict) else None
    rfc = [c for c in section.cases if c.group != TLS_GROUP]
    failures = [c for c in section.cases if c.group == TLS_GROUP]
    out = []
    if rfc:
        title = "Conformance — RFC 6455 sections 4-8, raw-frame peer" + (" over TLS (wss://)" if tls else "")
        intro = [_over_tls(tls)] if tls else []
        out.append(Section(title, [*intro, *_matrix(run, rfc, LEGEND)]))
    if failures:
        out.append(Section("TLS failures — certificates to refuse, TLS sessions that end mid-message",
                           _matrix(run, failures, TLS_LEGEND)))
    return out


def _over_tls(tls: dict[str, object]) -> str:
    names = tls.get("names")
    return (f"Every case ran over TLS: the peer presented `{tls.get('file')}` ({tls.get('key_type')}, for "
            f"{', '.join(map(str, names)) if isinstance(names, list) else '?'}) and each client trusted "
            f"`{tls.get('ca')}` only, with the same cases, verdicts and judge as over plain TCP.")


def _matrix(run: Run, cases: list[CaseRecord], legend: str) -> list[Block]:
    """The table, the legend, the counts per client and every finding."""
    assert run.conformance is not None
    verdicts = run.conformance.verdicts
    clients = list(verdicts)

    def found(client: str, case: CaseRecord) -> Verdict | None:
        return verdicts[client].get(case.id)

    def mark(client: str, case: CaseRecord) -> str:
        v = found(client, case)
        return MARKS.get(v.verdict, "?") if v else "–"

    table = Grid(["case", "RFC", "what the peer sends", "a strict client", *clients])
    for case in cases:
        table.add([f"`{case.id}`", case.section, case.title, case.strict, *(mark(c, case) for c in clients)])
    shown = (*JUDGED, "n/a") if any(v.verdict == "n/a" for by_case in verdicts.values()
                                    for v in by_case.values()) else JUDGED
    counts = Grid(["client", *shown, "not run"], right=set(range(1, len(shown) + 2)))
    findings = Grid(["client", "case", "verdict", "what happened"])
    for c in clients:
        got = {case.id: found(c, case) for case in cases}
        tally = {k: sum(1 for v in got.values() if v and v.verdict == k) for k in shown}
        counts.add([_label(run, c), *(str(tally[k]) for k in shown), str(len(cases) - sum(tally.values()))])
        record = run.clients.get(c)
        na = next((v for v in got.values() if v and v.verdict == "n/a"), None)
        problems = [(cid, v) for cid, v in got.items() if v and v.verdict in ("non-strict", "fail")]
        if record is not None and record.error:
            findings.add([c, "–", "not run", record.error])
        elif na:
            findings.add([c, "–", "n/a", na.detail])
        elif not problems:
            findings.add([c, "–", "–", "strict on every case run"])
        for cid, v in problems:
            findings.add([c, f"`{cid}`", MARKS[v.verdict], v.detail])
    return [table, legend, counts, "**Findings** (every case that is not strict):", findings]


def _label(run: Run, name: str) -> str:
    record = run.clients.get(name)
    return f"{name} ({record.label})" if record else name
