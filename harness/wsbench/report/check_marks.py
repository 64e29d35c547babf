"""What the ranked tables say of the checks a cell's programs skip (issue 31): a cell is
marked when its server or client lets invalid UTF-8 through on a text workload, or does
not check masking (any workload), from the programs' conformance summaries (schema 11);
each mark names a footnote with the cases let through. A program whose check was not
tested says "conformance not checked", distinct from a check that holds. Runs without
summaries (before schema 11) are marked nowhere.

Shared by the ranked tables (ranked.py: a "checks" column and footnotes under the
table), the CSV (a column) and the report's conformance section."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..model import Cell, CheckResult, ConformanceSummary, ProgramRecord, Run
from ..rfc_checks import MASKING, UTF8

SHOWN_IDS = 3  # a footnote names this many cases, then how many more
HOLDS, SKIPS, NOT_CHECKED = "holds", "skips", "not checked"
TONE = {HOLDS: "ok", SKIPS: "failed", NOT_CHECKED: "none"}  # the HTML's colour of a cell's checks (doc.TONES)


@dataclass(frozen=True)
class Skip:
    """One check one program of a cell skips."""

    side: str  # server or client
    name: str
    check: CheckResult

    @property
    def what(self) -> str:
        return f"{self.side} {self.name}: {self.check.name}"


@dataclass(frozen=True)
class CellChecks:
    """What a cell's programs check of what its workload relies on."""

    skips: list[Skip]
    unchecked: list[str]  # "server NAME", "client NAME": a check not tested (or no summary)

    @property
    def status(self) -> str:
        return SKIPS if self.skips else NOT_CHECKED if self.unchecked else HOLDS


def recorded(run: Run) -> bool:
    """Whether the run has conformance summaries at all (schema 11 runs of `wsbench run`)."""
    return any(r.conformance is not None for r in (*run.servers.values(), *run.clients.values()))


def relied_on(run: Run, workload: str) -> tuple[str, ...]:
    """The checks a workload's cells are marked for: masking always, UTF-8 on text."""
    params = run.workloads.get(workload, {}).get("params") or {}
    return (UTF8, MASKING) if params.get("type") == "text" else (MASKING,)


def of_cell(run: Run, cell: Cell) -> CellChecks:
    skips: list[Skip] = []
    unchecked: list[str] = []
    keys = relied_on(run, cell.workload)
    for side, name, record in (("server", cell.server, run.servers.get(cell.server)),
                               ("client", cell.client, run.clients.get(cell.client))):
        summary = record.conformance if record is not None else None
        for key in keys:
            check = summary.check(key) if summary is not None else None
            if check is None:
                if f"{side} {name}" not in unchecked:
                    unchecked.append(f"{side} {name}")
            elif not check.holds:
                skips.append(Skip(side, name, check))
    return CellChecks(skips, unchecked)


def cases_line(ids: list[str], shown: int = SHOWN_IDS) -> str:
    """The case ids, abbreviated when long: the first few and how many more."""
    head = ", ".join(f"`{i}`" for i in ids[:shown])
    return head + (f" and {len(ids) - shown} more" if len(ids) > shown else "")


@dataclass
class Footnotes:
    """A table's footnotes: one per program and skipped check, numbered as first met."""

    numbers: dict[tuple[str, str, str], int] = field(default_factory=dict)
    lines: list[str] = field(default_factory=list)

    def number(self, run: Run, skip: Skip) -> int:
        key = (skip.side, skip.name, skip.check.key)
        if key not in self.numbers:
            self.numbers[key] = len(self.numbers) + 1
            self.lines.append(f"[{self.numbers[key]}] {skip.side} {_label(run, skip)} skips {skip.check.name}: "
                              f"let through {len(skip.check.let_through)} of {skip.check.cases} cases "
                              f"({cases_line(skip.check.let_through)}); {_source(run, skip)}")
        return self.numbers[key]

    def mark(self, run: Run, checks: CellChecks) -> str:
        """The cell's entry in the "checks" column."""
        if checks.skips:
            return "; ".join(f"**{s.side} skips {_short(s.check)}** [{self.number(run, s)}]" for s in checks.skips)
        if checks.unchecked:
            return "conformance not checked"
        return "checked, hold"


def _short(check: CheckResult) -> str:
    return "UTF-8" if check.key == UTF8 else "masking" if check.key == MASKING else check.name


def _label(run: Run, skip: Skip) -> str:
    record = (run.servers if skip.side == "server" else run.clients).get(skip.name)
    return f"`{skip.name}`" + (f" ({record.label})" if record is not None and record.label != skip.name else "")


def _source(run: Run, skip: Skip) -> str:
    summary = _summary((run.servers if skip.side == "server" else run.clients).get(skip.name))
    return "from " + (summary.note if summary is not None else "?")


def _summary(record: ProgramRecord | None) -> ConformanceSummary | None:
    return record.conformance if record is not None else None


def csv_fields(run: Run, cell: Cell) -> tuple[str, str]:
    """The CSV's ``conformance`` (holds, skips, not checked; empty without summaries) and
    ``checks_skipped`` (per skip: side, program, check and every case let through)."""
    if not recorded(run):
        return "", ""
    checks = of_cell(run, cell)
    skipped = "; ".join(f"{s.side} {s.name} {s.check.key}: {' '.join(s.check.let_through)}" for s in checks.skips)
    return checks.status, skipped
