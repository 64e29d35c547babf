"""Each program's conformance summary, recorded in the run at verify time: from a results
file that speaks for it (origins.py), else from the quick subset (quick.py), else "not
checked" with the reason; and the verdicts behind the summaries in the run's
``server_conformance`` and ``conformance`` sections (without what the servers sent
back), for the report's case-by-case table."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Mapping

from ..catalog import Program
from ..model import (CaseRecord, ConformanceSummary, Conformance, ProgramRecord, Run, ServerConformance,
                     ServerVerdict)
from ..model.program_checks import FROM_FILE, NONE, QUICK
from ..paths import relative
from ..progress import Progress
from ..rfc_checks import MASKING, RULES, UTF8, checks
from . import quick
from .origins import OFF, Sources, differs, verdicts_of, versions

SIDES = ("server", "client")
OFF_NOTE = "not checked: --conformance off"


@dataclass(frozen=True)
class Found:
    """A program's verdicts and the summary made of them."""

    cases: list[CaseRecord]
    verdicts: Mapping[str, Any]  # per case id: model.Verdict (clients) or model.ServerVerdict
    summary: ConformanceSummary


def record_all(run: Run, servers: list[Program], clients: list[Program], sources: Sources, log_dir: Path,
               progress: Progress) -> None:
    """Every server's and client's summary into its record, and the verdicts into the run's
    sections; a program already failed is "not checked". The unchecked twins of ``--verify
    both`` share their client's summary (the echo check changes no protocol handling)."""
    began = time.monotonic()
    programs = {"server": servers, "client": [c for c in clients if c.echo_checks]}
    records = {"server": run.servers, "client": run.clients}
    found: dict[str, dict[str, Found]] = {side: {} for side in SIDES}
    skipped: dict[str, str] = {}  # per program: the files that did not speak for it, and why
    for side in SIDES:
        for p in programs[side]:
            hit, why = _from_files(sources, side, run, records[side][p.name])
            if hit is not None:
                found[side][p.name] = hit
            elif why:
                skipped[p.name] = why
    if sources.fallback != OFF:
        _play_quick(run, programs, found, skipped, log_dir, progress)
    for side in SIDES:
        for p in programs[side]:
            record = records[side][p.name]
            hit = found[side].get(p.name)
            passed_over = skipped.get(p.name)
            if hit is None:
                record.conformance = ConformanceSummary(NONE, _not_checked(record, sources, passed_over))
            elif hit.summary.source == QUICK and passed_over:  # say why no file spoke for it
                record.conformance = replace(hit.summary, note=f"{hit.summary.note} (files passed over: {passed_over})")
            else:
                record.conformance = hit.summary
    for twin in (c for c in clients if not c.echo_checks and c.twin_of in run.clients):
        run.clients[twin.name].conformance = run.clients[str(twin.twin_of)].conformance
    _sections(run, found)
    _notes([(side, p.name, records[side][p.name]) for side in SIDES for p in programs[side]], progress)
    progress.note(f"conformance summaries in {time.monotonic() - began:.1f} s")


def _notes(programs: list[tuple[str, str, ProgramRecord]], progress: Progress) -> None:
    """One line per program, those not checked with --conformance off in one."""
    off = [f"{side} {name}" for side, name, record in programs
           if record.conformance == ConformanceSummary(NONE, OFF_NOTE)]
    for side, name, record in programs:
        if f"{side} {name}" not in off:
            progress.note(f"conformance: {side} {name}: {describe(record.conformance)}")
    if off:
        progress.note(f"conformance not checked (--conformance off): {', '.join(off)}")


def _from_files(sources: Sources, side: str, run: Run, record: ProgramRecord) -> tuple[Found | None, str]:
    """The newest file that speaks for ``record`` (same versions), or None and why the
    files that hold it did not."""
    here = versions(run, record)
    passed = []
    for path, other, given in sources.candidates(side):
        verdicts = verdicts_of(other, side, record.name)
        there = (other.servers if side == "server" else other.clients).get(record.name)
        if not verdicts or there is None:
            continue
        if record.target and not given:
            passed.append(f"{relative(path)}: a target is taken from a file only if named with --conformance")
            continue
        why = differs(here, versions(other, there))
        if why:
            passed.append(f"{relative(path)}: {why}")
            continue
        section = other.server_conformance if side == "server" else other.conformance
        assert section is not None
        cases = [c for c in section.cases if c.id in verdicts]
        note = f"{relative(path)} ({other.created}): {len(cases)} cases"
        return Found(cases, verdicts, ConformanceSummary(FROM_FILE, note, checks(RULES[side], cases, verdicts),
                                                         str(path), other.created)), ""
    return None, "; ".join(passed)


def _play_quick(run: Run, programs: dict[str, list[Program]], found: dict[str, dict[str, Found]],
                skipped: dict[str, str], log_dir: Path, progress: Progress) -> None:
    """The quick subset for every program no file spoke for and that can play it: the
    clients' in a thread of their own while the servers play theirs."""
    servers = [p for p in programs["server"] if p.name not in found["server"] and run.servers[p.name].status == "ok"]
    clients = []
    for p in programs["client"]:
        if p.name in found["client"] or run.clients[p.name].status != "ok":
            continue
        why = quick.cannot_play_client(p)
        if why:
            skipped[p.name] = "; ".join(filter(None, [skipped.get(p.name), f"the quick subset: {why}"]))
        else:
            clients.append(p)
    server_cases, client_cases = quick.server_subset(), quick.client_subset()
    stop = threading.Event()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="quick-clients") as side:
        of_clients = side.submit(quick.play_clients, clients, client_cases, log_dir, stop)
        try:
            of_servers = quick.play_servers(servers, server_cases, log_dir)
        except BaseException:
            stop.set()  # Ctrl-C: the clients' processes are killed, not waited for
            raise
        by_client = of_clients.result()
    records = [CaseRecord.from_json(c.to_json()) for c in server_cases]
    for name, got in of_servers.items():
        if isinstance(got, str):
            skipped[name] = "; ".join(filter(None, [skipped.get(name), f"the quick subset: {got}"]))
            progress.note(f"! conformance: server {name}: {got}")
        else:
            found["server"][name] = _quick_found(records, got, "server")
    records = [CaseRecord.from_json(c.to_json()) for c in client_cases]
    for name, by_case in by_client.items():
        found["client"][name] = _quick_found(records, by_case, "client")


def _quick_found(cases: list[CaseRecord], verdicts: Mapping[str, Any], side: str) -> Found:
    note = f"the quick subset at verify time: {len(verdicts)} cases of invalid UTF-8 and masking"
    return Found(cases, verdicts, ConformanceSummary(QUICK, note, checks(RULES[side], cases, verdicts)))


def _not_checked(record: ProgramRecord, sources: Sources, skipped: str | None) -> str:
    if record.status != "ok":
        why = f"it failed ({record.error})" if record.error else "it failed"
    elif sources.fallback == OFF:
        why = "--conformance off"
    else:
        why = "no file speaks for it and the quick subset could not be played"
    return OFF_NOTE if why == "--conformance off" and not skipped else f"not checked: {why}" + (
        f"; {skipped}" if skipped else "")


def _sections(run: Run, found: dict[str, dict[str, Found]]) -> None:
    """The verdicts behind the summaries, per side: the union of the cases, in order."""
    for side in SIDES:
        hits = found[side]
        if not hits:
            continue
        cases = list({c.id: c for hit in hits.values() for c in hit.cases}.values())
        if side == "server":
            run.server_conformance = ServerConformance(cases, {name: {cid: replace(v, observed=None) if isinstance(
                v, ServerVerdict) else v for cid, v in hit.verdicts.items()} for name, hit in hits.items()})
        else:
            run.conformance = Conformance(cases, {name: dict(hit.verdicts) for name, hit in hits.items()})


def describe(summary: ConformanceSummary | None) -> str:
    """One line: where the summary came from, and the checks a ranked table marks."""
    if summary is None:
        return "not recorded"
    if summary.source == NONE:
        return summary.note
    parts = []
    for key in (UTF8, MASKING):
        check = summary.check(key)
        name = next(r.name for r in RULES["server"] if r.key == key)
        parts.append(f"{name} not checked" if check is None else f"{check.name} holds ({_cases(check.cases)})"
                     if check.holds else f"{check.name} let through {len(check.let_through)} of {check.cases}")
    return f"{', '.join(parts)}; from {summary.note}"


def _cases(n: int) -> str:
    return f"{n} case{'s' if n != 1 else ''}"
