"""The permessage-deflate tables as report sections, from a run's ``deflate_conformance``
section alone (so any saved run renders): the client tables and the server tables as the
two rooms draw theirs (conformance/tables.py, server_conformance/server_tables.py), over
a view of the run holding this section's side in their place, retitled for RFC 7692,
with this room's counts per program (informational and n/a included)."""

from __future__ import annotations

from dataclasses import replace

from ..conformance import tables as client_tables
from ..doc import Block, Grid, Section
from ..model import VERDICT_MARKS as MARKS, Run, ServerVerdict, Verdict
from ..server_conformance import server_tables

KINDS = ("strict", "non-strict", "fail", "informational", "n/a")
INTRO = ("permessage-deflate (RFC 7692) held to its rules: each case's RFC column is its RFC 7692 section. Every "
         "program runs with compression on as the catalog turns it on (harness/runtimes.toml's `deflate` tables: "
         "the clients' switch, the servers' twins NAME/deflate); one that cannot compress is **n/a** with the "
         "catalog's reason. docs/deflate-conformance.md has the rules.")
CLIENT_NOTE = ("**I** informational: whether the case's answer is valid depends on the client's own offer (RFC 7692 "
               "7.1: client_max_window_bits answered only where offered, server_no_context_takeover answered wherever "
               "offered), and the client's offer made it the other kind: it was judged as that kind, with the "
               "verdict under \"Informational cases\".")


def counts(verdicts: dict[str, dict[str, Verdict]] | dict[str, dict[str, ServerVerdict]], cases: int) -> Grid:
    """Per program: how many cases of each verdict, and how many were not run."""
    grid = Grid(["program", *(MARKS[k] for k in KINDS), "not run"], right=set(range(1, len(KINDS) + 2)))
    for name, by_case in verdicts.items():
        tally = [sum(1 for v in by_case.values() if v.verdict == k) for k in KINDS]
        grid.add([name, *map(str, tally), str(cases - sum(tally))])
    return grid


def sections(run: Run) -> list[Section]:
    section = run.deflate_conformance
    if section is None:
        return []
    out = []
    if section.clients is not None:
        view = replace(run, conformance=section.clients, settings={**run.settings, "tls": None})
        drawn = client_tables.sections(view)
        blocks: list[Block] = [INTRO, counts(section.clients.verdicts, len(section.clients.cases)), CLIENT_NOTE]
        out += [Section("Deflate conformance — clients, RFC 7692 permessage-deflate, raw-frame peer",
                        [*blocks, *s.blocks]) for s in drawn]
        informational = [(c, cid, v) for c, by_case in section.clients.verdicts.items()
                         for cid, v in by_case.items() if v.verdict == "informational"]
        if informational and out:
            grid = Grid(["client", "case", "what happened"])
            for c, cid, v in informational:
                grid.add([c, f"`{cid}`", v.detail])
            out[-1].blocks.extend(["**Informational cases**:", grid])
    if section.servers is not None:
        played = {name: by_case for name, by_case in section.servers.verdicts.items()
                  if any(v.verdict != "n/a" for v in by_case.values())}
        unable = [f"**Server `{name}`**: n/a: {next(iter(by_case.values())).detail}"
                  for name, by_case in section.servers.verdicts.items() if name not in played and by_case]
        view = replace(run, server_conformance=replace(section.servers, verdicts=played))
        drawn = server_tables.sections(view) if played else []
        out.append(Section("Deflate conformance — servers, RFC 7692 permessage-deflate, raw-byte client",
                           [INTRO, counts(section.servers.verdicts, len(section.servers.cases)), *unable,
                            *(b for s in drawn for b in _without_checks(s.blocks))]))
    return out


def _without_checks(blocks: list[Block]) -> list[Block]:
    """The server tables' blocks but "What each server checks" (RFC 6455's checks: none
    of them is about compression)."""
    out: list[Block] = []
    skip = False
    for block in blocks:
        if isinstance(block, str) and block.startswith("**What each server checks**"):
            skip = True
            continue
        if skip:
            skip = False
            continue
        out.append(block)
    return out
