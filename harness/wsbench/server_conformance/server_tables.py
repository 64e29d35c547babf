"""The server conformance tables as report sections, from a run's ``server_conformance``
section alone (so ``wsbench report`` renders any saved run): a summary per Autobahn
section and server, what each server checks (server_checks.py), the table of every case (rows) against every server (columns), each
cell the verdict and the close behaviour, and every case that is not strict, in one line."""

from __future__ import annotations

from ..doc import Block, Grid, Section
from ..model import VERDICT_MARKS as MARKS, CaseRecord, Run, ServerVerdict
from .server_checks import CHECKS, server_checks

KINDS = ("strict", "non-strict", "fail", "informational")
LEGEND = ("Each cell: the verdict, then the close behaviour. Verdict: **S** strict: the close code RFC 6455 asks "
          "for (1002 protocol error, 1007 invalid UTF-8; 7.4.1), nothing echoed that must not be; for valid input, "
          "every message echoed whole, every ping ponged with its payload, our close answered with its code; **n** "
          "non-strict: the connection failed by dropping TCP without a close frame (7.1.7 permits it), too late "
          "for a fail-fast case (8.1), a close answered with another valid code, or only the latest of several "
          "pings answered (5.5.3 MAY); **F** fail: a wrong code, an invalid message echoed, a valid one lost or "
          "changed, a frame a server must never send, no reaction (a hang); **I** informational: the RFC leaves "
          "the answer open, what the server did is in Findings. Close behaviour: **S** a closing handshake, then "
          "the server closed TCP first (7.1.1); **n** the handshake, but the client had to close TCP (or the "
          "server reset it); **F** no close frame from the server (TCP dropped, or left open); **–** not run.")


def sections(run: Run) -> list[Section]:
    section = run.server_conformance
    if section is None:
        return []
    servers = list(section.verdicts)
    tls = run.settings.get("tls") if isinstance(run.settings, dict) else None
    over = (f" over TLS (wss://: the servers' twins presenting `{tls.get('file')}`, the client trusting "
            f"`{tls.get('ca')}` only)" if isinstance(tls, dict) else "")
    blocks: list[Block] = [
        f"{len(section.cases)} cases against {len(servers)} server{'s' if len(servers) != 1 else ''}{over}, played "
        "by a raw-byte client (every frame masked with a fresh key, no WebSocket library); grouped by "
        "Autobahn|Testsuite's sections, each case with its RFC 6455 section.",
        *_failed_servers(run), _summary(run, section.cases, servers),
        "**What each server checks**: per check RFC 6455 asks of a server, whether every invalid input of the "
        "cases about it failed the connection as asked (S or n: yes), or some was echoed, ignored or answered with "
        "a wrong code (F; the cases are in Findings):",
        _checks(section.cases, section.verdicts, servers), LEGEND, _table(section.cases, section.verdicts, servers),
        "**Findings** (every case that is not strict, and every close behaviour that is not):",
        _findings(section.cases, section.verdicts, servers)]
    return [Section("Server conformance — RFC 6455, raw-byte client" + (" over TLS" if over else ""), blocks)]


def _failed_servers(run: Run) -> list[Block]:
    return [f"**Server `{name}`**: {record.error}" for name, record in run.servers.items() if record.error]


def _summary(run: Run, cases: list[CaseRecord], servers: list[str]) -> Grid:
    """Per group and server: strict / non-strict / fail / informational, and the close
    behaviour's failures."""
    grid = Grid(["section", "cases", *(_label(run, s) for s in servers)])
    groups = list(dict.fromkeys(c.group for c in cases))
    for group in [*groups, "all"]:
        chosen = [c for c in cases if group in ("all", c.group)]
        cells = []
        for s in servers:
            got = [v for c in chosen if (v := run.server_conformance.verdicts[s].get(c.id))]  # type: ignore[union-attr]
            if not got:
                cells.append("–")
                continue
            tally = {k: sum(1 for v in got if v.verdict == k) for k in KINDS}
            bad_close = sum(1 for v in got if v.close != "strict")
            cells.append(" ".join(f"{n}{MARKS[k]}" for k, n in tally.items() if n) + (f" · close {bad_close}✗"
                                                                                        if bad_close else ""))
        grid.add([f"**{group}**" if group == "all" else group, str(len(chosen)), *cells])
    return grid


def _checks(cases: list[CaseRecord], verdicts: dict[str, dict[str, ServerVerdict]], servers: list[str]) -> Grid:
    per_server = {s: server_checks(cases, verdicts[s]) for s in servers}
    grid = Grid(["check", *servers])
    for i, (name, _) in enumerate(CHECKS):
        cells = []
        for s in servers:
            check = per_server[s][i]
            cells.append("–" if not check.cases else "yes" if check.holds else
                         f"**no**: F on {len(check.let_through)} of {check.cases}")
        grid.add([name, *cells])
    return grid


def _table(cases: list[CaseRecord], verdicts: dict[str, dict[str, ServerVerdict]], servers: list[str]) -> Grid:
    grid = Grid(["case", "RFC", "what the client sends", "a strict server", *servers])
    group = None
    for case in cases:
        if case.group != group:  # a row naming each of Autobahn's sections, as its index page does
            group = case.group
            grid.add([f"**{group}**"])
        grid.add([f"`{case.id}`", case.section, case.title, case.strict,
                  *(_mark(verdicts[s].get(case.id)) for s in servers)])
    return grid


def _findings(cases: list[CaseRecord], verdicts: dict[str, dict[str, ServerVerdict]], servers: list[str]) -> Grid:
    grid = Grid(["server", "case", "verdict", "what happened", "close behaviour"])
    for s in servers:
        rows = 0
        for case in cases:
            v = verdicts[s].get(case.id)
            if v is None or (v.verdict == "strict" and v.close == "strict"):
                continue
            close = "" if v.close == "strict" else f"{MARKS.get(v.close, '?')}: {v.close_detail}"
            grid.add([s, f"`{case.id}`", MARKS.get(v.verdict, "?"), v.detail, close])
            rows += 1
        if not rows:
            grid.add([s, "–", "–", "strict on every case run, with clean closes", ""])
    return grid


def _mark(v: ServerVerdict | None) -> str:
    if v is None:
        return "–"
    return f"{MARKS.get(v.verdict, '?')}/{MARKS.get(v.close, '?')}"


def _label(run: Run, name: str) -> str:
    record = run.servers.get(name)
    return f"{name}" if record is None else f"{name} ({record.label})"
