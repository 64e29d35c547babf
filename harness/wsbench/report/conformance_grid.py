"""The conformance section of a measured run's report (issue 31): what each server and
client of the run checks of RFC 6455 (their conformance summaries, schema 11) and where
that is known from, then the cases behind it, case by case as Autobahn|Testsuite's index
page shows them: one table per side, rows the cases grouped by section, a column per
program, each cell the verdict (S, n, F, I) in its colour. Made from the run file alone
(its programs' summaries and its ``server_conformance`` and ``conformance`` sections)."""

from __future__ import annotations

from typing import Mapping, Protocol

from ..doc import Block, Grid, Section
from ..model import VERDICT_MARKS as MARKS, CaseRecord, ConformanceSummary, Run
from ..model.program_checks import NONE
from ..rfc_checks import MASKING, RULES, UTF8, Rule
from .check_marks import cases_line, recorded

TITLE = "Conformance of the programs — what each checks of RFC 6455"
TONES = {"strict": "ok", "non-strict": "non-strict", "fail": "failed", "informational": "info", "n/a": "none"}
LEGEND = ("**S** strict: the connection failed with the code RFC 6455 asks for (valid input: handled whole, the "
          "close answered); **n** non-strict: failed by dropping TCP without a close frame (7.1.7 permits it), or "
          "another valid answer; **F** fail: invalid input let through (echoed or delivered), a wrong code, or no "
          "reaction; **I** informational: the RFC leaves the answer open; **n/a**: the client cannot run the case; "
          "**–** not played for this program. `wsbench conformance` (`--servers`) has the full tables, with what "
          "each program did.")


class Judged(Protocol):
    @property
    def verdict(self) -> str: ...


def sections(run: Run, case_by_case: bool = True) -> list[Section]:
    """The section, for a run with workloads and conformance summaries (none otherwise);
    without ``case_by_case`` (what ``wsbench run`` prints) the summaries only."""
    if not run.workloads or not recorded(run):
        return []
    return [Section(TITLE, [*summary_blocks(run), *(_cases(run) if case_by_case else [])])]


def summary_blocks(run: Run) -> list[Block]:
    """What each program checks, per check, and whence: the part ``wsbench run`` prints.
    A check no program was tested for has no column (the quick subset tests two)."""
    records = [(side, name, record) for side, by_name in (("server", run.servers), ("client", run.clients))
               for name, record in by_name.items()]
    shown = [rule for rule in RULES["server"] if rule.key in (UTF8, MASKING) or any(
        r.conformance is not None and r.conformance.check(rule.key) for _, _, r in records)]
    grid = Grid(["program", *(rule.name for rule in shown), "from"])
    for side, name, record in records:
        cells, tones = _checks_row(record.conformance, shown)
        grid.add([f"{side} `{name}`", *cells, _whence(record.conformance)], {}, tones)
    return [("What each server and client of this run checks: per check RFC 6455 asks of it, **yes** (with the "
             "number of cases) when it refused every invalid input of the cases about it that were judged, **no** "
             "with the cases it let through, **–** not checked. The ranked tables mark a row whose server or client "
             "lets invalid UTF-8 through on a text workload, or skips masking."), grid]


def _checks_row(summary: ConformanceSummary | None, shown: list[Rule]) -> tuple[list[str], dict[int, str]]:
    if summary is None or summary.source == NONE:
        return ["–"] * len(shown), {i + 1: "none" for i in range(len(shown))}
    cells: list[str] = []
    tones: dict[int, str] = {}
    for rule in shown:
        check = summary.check(rule.key)
        column = len(cells) + 1
        if check is None:
            cells.append("–")
            tones[column] = "none"
        elif check.holds:
            cells.append(f"yes ({check.cases})")
            tones[column] = "ok"
        else:
            cells.append(f"**no**: {len(check.let_through)} of {check.cases} let through: "
                         f"{cases_line(check.let_through)}")
            tones[column] = "failed"
    return cells, tones


def _whence(summary: ConformanceSummary | None) -> str:
    if summary is None:
        return "not recorded"
    return summary.note


def _cases(run: Run) -> list[Block]:
    out: list[Block] = []
    if run.server_conformance is not None:
        out += [f"**Servers**, case by case ({len(run.server_conformance.cases)} cases):",
                _grid(run.server_conformance.cases, run.server_conformance.verdicts)]
    if run.conformance is not None:
        out += [f"**Clients**, case by case ({len(run.conformance.cases)} cases):",
                _grid(run.conformance.cases, run.conformance.verdicts)]
    return [*out, LEGEND] if out else []


def _grid(cases: list[CaseRecord], verdicts: Mapping[str, Mapping[str, Judged]]) -> Grid:
    """Rows the cases, a bold row naming each section as it begins; a column per program."""
    programs = list(verdicts)
    grid = Grid(["case", "RFC", "what is sent", *programs])
    group = None
    for case in cases:
        if case.group != group:
            group = case.group
            grid.add([f"**{group}**"])
        cells = [f"`{case.id}`", case.section, case.title]
        tones = {}
        for p in programs:
            v = verdicts[p].get(case.id)
            tones[len(cells)] = TONES.get(v.verdict, "none") if v else "none"
            cells.append(MARKS.get(v.verdict, "?") if v else "–")
        grid.add(cells, {}, tones)
    return grid
