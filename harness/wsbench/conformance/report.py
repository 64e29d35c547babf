"""The conformance table in Markdown, from a run's ``conformance`` section alone (so
``wsbench report`` renders any saved run): rows are cases, columns are clients."""

from __future__ import annotations

from typing import Any

from ..results import Run

MARKS = {"strict": "S", "non-strict": "n", "fail": "F"}
LEGEND = ("**S** strict: the close code RFC 6455 asks for (for valid input: every message delivered, "
          "every ping ponged, the close answered with its code); **n** non-strict: the connection failed "
          "by dropping TCP without a close frame (RFC 6455 7.1.7 permits it), or a close answered with "
          "another valid code; **F** fail: a wrong code, a message delivered that must not be, a valid "
          "one lost or changed, or no reaction (a hang); **–** not run.")


def render(run: Run) -> list[str]:
    section = run.conformance
    if not section:
        return []
    cases: list[dict[str, Any]] = section.get("cases", [])
    verdicts: dict[str, dict[str, dict[str, str]]] = section.get("verdicts", {})
    clients = list(verdicts)
    out = ["## Conformance — RFC 6455 sections 4-8, raw-frame peer", "",
           "| case | RFC | what the peer sends | a strict client | " + " | ".join(clients) + " |",
           "|---|---|---|---|" + "|".join(":-:" for _ in clients) + "|"]
    for case in cases:
        marks = [MARKS.get(verdicts[c].get(case["id"], {}).get("verdict", ""), "–") for c in clients]
        out.append(f"| `{case['id']}` | {case['section']} | {_escape(case['title'])} | {_escape(case['strict'])} | "
                   + " | ".join(marks) + " |")
    out += ["", LEGEND, "", "| client | strict | non-strict | fail | not run |", "|---|---:|---:|---:|---:|"]
    for c in clients:
        counts = {v: 0 for v in MARKS}
        for case in cases:
            got = verdicts[c].get(case["id"], {}).get("verdict")
            if got in counts:
                counts[got] += 1
        missing = len(cases) - sum(counts.values())
        out.append(f"| {_label(run, c)} | {counts['strict']} | {counts['non-strict']} | {counts['fail']} | {missing} |")
    out += ["", "### Findings (every case that is not strict)", ""]
    for c in clients:
        problems = [(case["id"], verdicts[c][case["id"]]) for case in cases
                    if verdicts[c].get(case["id"], {}).get("verdict") in ("non-strict", "fail")]
        record = run.clients.get(c)
        if record is not None and record.error:
            out.append(f"- **{c}**: not run: {_escape(record.error)}")
        elif not problems:
            out.append(f"- **{c}**: strict on every case run")
        else:
            out.append(f"- **{c}**:")
            out += [f"  - `{cid}` {MARKS[v['verdict']]}: {_escape(v['detail'])}" for cid, v in problems]
    return out + [""]


def _label(run: Run, name: str) -> str:
    record = run.clients.get(name)
    return f"{name} ({record.label})" if record else name


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
