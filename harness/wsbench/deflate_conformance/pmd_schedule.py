"""Every program that can compress against the permessage-deflate cases, through the two
rooms' own schedules (conformance/schedule.py for the clients, server_conformance/
server_schedule.py for the servers) with this room's judges, into the run's
``deflate_conformance`` section:

- a client runs as ``deflate.with_deflate`` makes it (the catalog's switch: an argument or
  an environment variable; never a command written here); a client that cannot compress
  (``deflate.cannot_deflate``) gets ``n/a`` for every case, with the catalog's reason;
- a server runs as its deflate twin ``NAME/deflate`` (the catalog's ``deflate`` table);
  a twin that cannot compress is not started and gets ``n/a`` for every case.

The heavy cases (the bomb, the echoes of a megabyte) are played one at a time after all
the others, with their longer reaction time (HEAVY_REACT_S)."""

from __future__ import annotations

import ssl
from pathlib import Path
from typing import Callable

from .. import newrun
from ..catalog import Catalog, Program
from ..conformance import schedule as client_schedule
from ..conformance.cases import Case
from ..deflate import cannot_deflate, record as deflate_record, with_deflate
from ..model import CaseRecord, Conformance, DeflateConformance, Run, ServerConformance, ServerVerdict, Verdict
from ..progress import Progress
from ..server_conformance import server_schedule
from ..server_conformance.raw_client import play
from ..server_conformance.expectations import ServerCase
from . import pmd_client_judge as client_judge, pmd_server_judge as server_judge
from .pmd_server_cases import DeflateServerCase

NOT_APPLICABLE = "n/a"
SETTINGS_DEFLATE = {"mode": "on"}


def deflating(programs: list[Program]) -> tuple[list[Program], dict[str, str]]:
    """The programs as they run with permessage-deflate on (servers: their twins), and
    why each of the others cannot (by the name it runs under)."""
    runs = [with_deflate(p) for p in programs]
    unable = {p.name: why for p in runs if (why := cannot_deflate(p))}
    return runs, unable


def new_run(catalog: Catalog, argv: list[str], jobs: int, *, clients: list[Program] | None = None,
            servers: list[Program] | None = None, client_cases: list[Case] | None = None,
            server_cases: list[DeflateServerCase] | None = None) -> Run:
    """A run of one side: ``clients`` with ``client_cases``, or ``servers`` (their twins)
    with ``server_cases``."""
    clients, servers = clients or [], servers or []
    section = DeflateConformance(
        Conformance([CaseRecord.from_json(c.to_json()) for c in client_cases or []], {c.name: {} for c in clients})
        if clients else None,
        ServerConformance([CaseRecord.from_json(c.to_json()) for c in server_cases or []],
                          {s.name: {} for s in servers}) if servers else None)
    run = newrun.new_run(catalog, argv, servers, clients, {"jobs": jobs, "tls": None, "deflate": SETTINGS_DEFLATE},
                         deflate_conformance=section)
    for table, programs in ((run.servers, servers), (run.clients, clients)):
        for p in programs:
            table[p.name].deflate = deflate_record(p)
    return run


def _able(programs: list[Program], kind: str, run: Run, progress: Progress,
          not_applicable: Callable[[Program, str], None]) -> list[Program]:
    """The programs that can compress; each other one n/a on every case (``not_applicable``
    records its verdicts), with the catalog's reason."""
    able = []
    for program in programs:
        why = cannot_deflate(program)
        if why:
            (run.clients if kind == "client" else run.servers)[program.name].status = NOT_APPLICABLE
            not_applicable(program, why)
            progress.note(f"- {kind} '{program.name}': n/a: {why}")
        else:
            able.append(program)
    return able


def execute_clients(clients: list[Program], cases: list[Case], run: Run, log_dir: Path, jobs: int,
                    progress: Progress, results: Path) -> Run:
    """Every client that can compress against every case; n/a for the rest."""
    assert run.deflate_conformance is not None and run.deflate_conformance.clients is not None
    section = run.deflate_conformance.clients
    able = _able(clients, "client", run, progress, lambda client, why: section.verdicts.__setitem__(
        client.name, {case.id: Verdict(NOT_APPLICABLE, why) for case in cases}))
    return client_schedule.execute(able, cases, run, log_dir, jobs, progress, results, section=section,
                                   judge_with=client_judge.judge, heavy_alone=True)


async def play_and_judge(case: ServerCase, host: str, port: int, path: str,
                         context: ssl.SSLContext | None = None) -> ServerVerdict:
    assert isinstance(case, DeflateServerCase)
    return server_judge.judge(case, await play(case, host, port, path, context))


def execute_servers(servers: list[Program], cases: list[DeflateServerCase], run: Run, log_dir: Path, jobs: int,
                    progress: Progress, results: Path) -> Run:
    """Every server twin that can compress against every case; n/a for the rest."""
    assert run.deflate_conformance is not None and run.deflate_conformance.servers is not None
    section = run.deflate_conformance.servers
    able = _able(servers, "server", run, progress, lambda server, why: section.verdicts.__setitem__(
        server.name, {c.id: ServerVerdict(NOT_APPLICABLE, why, NOT_APPLICABLE, "") for c in cases}))
    return server_schedule.execute(able, list(cases), run, log_dir, jobs, progress, results, section=section,
                                   play_case=play_and_judge)


__all__ = ["deflating", "execute_clients", "execute_servers", "new_run"]
