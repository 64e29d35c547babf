"""Every selected server against every selected case: each catalog server started with
``server.start_server`` (its own process group, on a loopback port the kernel picks),
played, and stopped by its process group whatever happens (success, failure, Ctrl-C;
``procs.kill_all`` in the CLI too); a ``--target`` is played where it runs. With
``--tls`` each server is its TLS twin (NAME/wss, the catalog's ``tls`` table) and every
connection is wss://, trusting the test CA only. Cases go
``jobs`` connections at a time, the cases of megabytes one at a time; every verdict goes
into the run's ``server_conformance`` section, written after each server. A catalog
server that exits on its own mid-table is a failure of the case it was noticed after
(and of the server's record), and is started again for the cases left."""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Awaitable, Callable

from .. import certificates, environment, newrun, procs
from ..catalog import Catalog, Program, tls_twins
from ..errors import WsbenchError
from ..model import CaseRecord, ProgramRecord, Run, ServerConformance, ServerVerdict, now, write_json
from ..progress import Progress
from ..server import start_server
from ..target import is_target, parse_url
from .server_cases import ServerCase
from .raw_client import play
from .replies import SERVER_EOF, SERVER_RESET
from .server_judge import FAIL, judge

DEFAULT_JOBS = 4  # connections at a time
SETTLE_S = 0.1  # after a server ended TCP: for a crashed server's process to have exited
CASE_LIMIT_S = 120.0  # a case that takes longer is cut off (a bug of ours, or a server that trickles)


@dataclass(frozen=True)
class TlsPlan:
    """``--tls``: the servers' TLS twins (NAME/wss), what the run records of the
    certificate, and the client's context (it trusts the test CA only)."""

    servers: list[Program]
    settings: dict[str, Any]
    context: ssl.SSLContext


def over_tls(servers: list[Program]) -> TlsPlan:
    certs = certificates.load_certs()
    twins = tls_twins(servers, certs.values("server"))
    return TlsPlan(twins, {"mode": "on", **certs.describe("server")}, certificates.client_context(certs))


def new_run(catalog: Catalog, servers: list[Program], cases: list[ServerCase], argv: list[str], jobs: int,
            tls: TlsPlan | None = None) -> Run:
    def record(p: Program) -> ProgramRecord:
        if is_target(p):
            return replace(newrun.record(p), target=p.command[0])
        return replace(newrun.record(p), tls=tls.settings) if p.secure and tls else newrun.record(p)

    section = ServerConformance([CaseRecord.from_json(c.to_json()) for c in cases], {s.name: {} for s in servers})
    return newrun.new_run(catalog, argv, servers, [], {"jobs": jobs, "tls": tls.settings if tls else None},
                          server_record=record, server_conformance=section)


def _fixed_path(path: str) -> Callable[[ServerCase], str]:
    """A target's path, the same for every case."""
    return lambda case: path


@dataclass
class Endpoint:
    """Where the cases connect: a catalog server's port (another once it is restarted
    after a crash) and each case's own path, or a target's URL as it is."""

    host: str
    port: int
    path_of: Callable[[ServerCase], str]


class Started:
    """A catalog server while its cases are played: restarted (on another port) when it
    exits on its own, which the case it was noticed after records as a failure."""

    def __init__(self, program: Program, log_dir: Path, endpoint: Endpoint) -> None:
        self.program, self.log_dir, self.endpoint = program, log_dir, endpoint
        self.server = start_server(program, log_dir)
        endpoint.port = self.server.port
        self.crashes: list[str] = []

    def check(self, case: ServerCase, verdict: ServerVerdict) -> ServerVerdict:
        """``verdict``, or a failure naming the exit if the server is gone (it is then
        started again for the cases left)."""
        if self.server.alive():
            return verdict
        code = self.server.proc.returncode
        self.crashes.append(f"exited with code {code} (noticed after case '{case.id}')")
        self.server.stop()
        self.server = start_server(self.program, self.log_dir)
        self.endpoint.port = self.server.port
        return ServerVerdict(FAIL, f"the server process exited with code {code} during this case (or one played "
                                   f"beside it); it was started again. {verdict.detail}", verdict.close,
                             verdict.close_detail, verdict.observed)

    def stop(self) -> str | None:
        return self.server.stop()


# one case played against a server and judged: (case, host, port, path, TLS context) -> verdict
PlayCase = Callable[[ServerCase, str, int, str, "ssl.SSLContext | None"], Awaitable[ServerVerdict]]


async def play_and_judge(case: ServerCase, host: str, port: int, path: str,
                         context: ssl.SSLContext | None = None) -> ServerVerdict:
    """This room's way: raw_client.play, then server_judge.judge."""
    return judge(case, await play(case, host, port, path, context))


def execute(servers: list[Program], cases: list[ServerCase], run: Run, log_dir: Path, jobs: int,
            progress: Progress, results: Path, context: ssl.SSLContext | None = None, *,
            section: ServerConformance | None = None, play_case: PlayCase = play_and_judge) -> Run:
    """Fill ``run.server_conformance.verdicts`` (or ``section``'s: another room's, e.g.
    deflate_conformance/, played and judged by its ``play_case``); ``context``: every
    connection over TLS with it (the servers are TLS twins)."""
    section = section or run.server_conformance
    assert section is not None
    progress.total = len(servers) * len(cases)
    try:
        for program in servers:
            verdicts = section.verdicts[program.name]
            record = run.servers[program.name]
            started = None
            try:
                if is_target(program):
                    url = parse_url(program.command[0], allow_remote=False)
                    endpoint = Endpoint(url.host, url.port, _fixed_path(url.path))
                else:
                    endpoint = Endpoint("127.0.0.1", 0, lambda case: f"/conformance/{case.id}")
                    started = Started(program, log_dir, endpoint)
                    record.info = started.server.info
                    progress.note(f"- server '{program.name}' ready on port {endpoint.port}")
            except WsbenchError as exc:
                record.status, record.error = "failed", str(exc)
                progress.note(f"! {exc}")
                progress.done += len(cases)
                continue
            try:
                def done(case: ServerCase, verdict: ServerVerdict, name: str = program.name,
                         started: Started | None = started) -> None:
                    if started is not None:
                        verdict = started.check(case, verdict)
                    verdicts[case.id] = verdict
                    progress.item(f"{name} {case.id}: {verdict.verdict}")
                    progress.advance()

                asyncio.run(play_all(cases, endpoint, jobs, done, context, settle=started is not None,
                                     play_case=play_case))
            except WsbenchError as exc:  # it could not be started again after a crash
                record.status, record.error = "failed", str(exc)
                progress.note(f"! {exc}")
            finally:
                if started is not None:
                    if started.crashes:
                        record.status = "failed"
                        record.error = record.error or f"the server {'; '.join(started.crashes)}"
                        progress.note(f"! server '{program.name}': {'; '.join(started.crashes)}")
                    problem = started.stop()
                    if problem:
                        progress.note(f"! server '{program.name}': {problem}")
                write_json(run, results, summaries=False)
        run.complete = True
    finally:
        procs.kill_all()
        run.finished = now()
        run.environment["load_average_after"] = environment.load_average()
        progress.finish()
        write_json(run, results, summaries=False)
    return run


async def play_all(cases: list[ServerCase], endpoint: Endpoint, jobs: int,
                   done: Callable[[ServerCase, ServerVerdict], None], context: ssl.SSLContext | None = None,
                   settle: bool = False, play_case: PlayCase = play_and_judge) -> None:
    """Every case against one server, ``jobs`` at a time (the heavy ones alone, after the
    others); ``done`` gets each verdict as soon as it is known (with ``settle``, a case
    whose server ended TCP is handed over ``SETTLE_S`` later: a server that crashed has
    then exited, and ``done`` can tell)."""
    slots = asyncio.Semaphore(max(1, jobs))

    async def one(case: ServerCase) -> None:
        async with slots:
            playing = play_case(case, endpoint.host, endpoint.port, endpoint.path_of(case), context)
            try:
                verdict = await asyncio.wait_for(playing, CASE_LIMIT_S)
            except asyncio.TimeoutError:
                verdict = ServerVerdict(FAIL, f"the case did not end within {CASE_LIMIT_S:g} s", FAIL, "–")
            except Exception as exc:  # a verdict for every case, even if the client trips over odd input
                verdict = ServerVerdict(FAIL, f"could not be played: {type(exc).__name__}: {exc}", FAIL, "–")
            if settle and (verdict.observed or {}).get("tcp_end") in (SERVER_EOF, SERVER_RESET):
                await asyncio.sleep(SETTLE_S)
            done(case, verdict)

    await asyncio.gather(*(one(c) for c in cases if not c.heavy))
    for case in (c for c in cases if c.heavy):
        await one(case)
