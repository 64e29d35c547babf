"""The conformance table as a report section (Markdown and HTML), from a run's
``conformance`` section alone (so ``wsbench report`` renders any saved run): rows are
cases, columns are clients."""

from __future__ import annotations

from ..doc import Grid, Section
from ..records import CaseRecord
from ..results import Run

MARKS = {"strict": "S", "non-strict": "n", "fail": "F"}
LEGEND = ("**S** strict: the close code RFC 6455 asks for (for valid input: every message delivered, "
          "every ping ponged, the close answered with its code); **n** non-strict: the connection failed "
          "by dropping TCP without a close frame (RFC 6455 7.1.7 permits it), or a close answered with "
          "another valid code; **F** fail: a wrong code, a message delivered that must not be, a valid "
          "one lost or changed, or no reaction (a hang); **–** not run.")


def sections(run: Run) -> list[Section]:
    """The table (cases x clients), the counts per client and every finding, as one
    section (none for a run without a conformance section)."""
    section = run.conformance
    if section is None:
        return []
    cases, verdicts = section.cases, section.verdicts
    clients = list(verdicts)

    def mark(client: str, case: CaseRecord) -> str | None:
        found = verdicts[client].get(case.id)
        return found.verdict if found else None

    table = Grid(["case", "RFC", "what the peer sends", "a strict client", *clients])
    for case in cases:
        marks = [MARKS.get(mark(c, case) or "", "–") for c in clients]
        table.add([f"`{case.id}`", case.section, case.title, case.strict, *marks])
    counts = Grid(["client", "strict", "non-strict", "fail", "not run"], right={1, 2, 3, 4})
    for c in clients:
        got = [mark(c, case) for case in cases]
        tally = {v: got.count(v) for v in MARKS}
        counts.add([_label(run, c), *(str(tally[v]) for v in MARKS), str(len(cases) - sum(tally.values()))])
    findings = Grid(["client", "case", "verdict", "what happened"])
    for c in clients:
        record = run.clients.get(c)
        problems = [(case.id, verdicts[c][case.id]) for case in cases if mark(c, case) in ("non-strict", "fail")]
        if record is not None and record.error:
            findings.add([c, "–", "not run", record.error])
        elif not problems:
            findings.add([c, "–", "–", "strict on every case run"])
        for cid, v in problems:
            findings.add([c, f"`{cid}`", MARKS[v.verdict], v.detail])
    return [Section("Conformance — RFC 6455 sections 4-8, raw-frame peer",
                    [table, LEGEND, counts, "**Findings** (every case that is not strict):", findings])]


def _label(run: Run, name: str) -> str:
    record = run.clients.get(name)
    return f"{name} ({record.label})" if record else name
