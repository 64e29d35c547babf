"""Every selected server against every selected case: each catalog server started with
``server.start_server`` (its own process group, on a loopback port the kernel picks),
played, and stopped by its process group whatever happens (success, failure, Ctrl-C;
``procs.kill_all`` in the CLI too); a ``--target`` is played where it runs. With
``--tls`` each server is its TLS twin (NAME/wss, the catalog's ``tls`` table) and every
connection is wss://, trusting the test CA only. Cases go
``jobs`` connections at a time, the cases of megabytes one at a time; every verdict goes
into the run's ``server_conformance`` section, written after each server."""

from __future__ import annotations

import asyncio
import ssl
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Callable

from .. import certificates, environment, newrun, procs
from ..catalog import Catalog, Program
from ..errors import WsbenchError
from ..model import CaseRecord, ProgramRecord, Run, ServerConformance, ServerVerdict, now, write_json
from ..progress import Progress
from ..server import start_server
from ..target import is_target, parse_url
from .server_cases import ServerCase
from .raw_client import play
from .server_judge import FAIL, judge

DEFAULT_JOBS = 4  # connections at a time
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
    values = certs.values("server")
    twins = []
    for server in servers:
        why = server.cannot_tls()
        if why:
            raise WsbenchError(f"server '{server.name}' {why}")
        twins.append(server.over_tls(values))
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


def execute(servers: list[Program], cases: list[ServerCase], run: Run, log_dir: Path, jobs: int,
            progress: Progress, results: Path, context: ssl.SSLContext | None = None) -> Run:
    """Fill ``run.server_conformance.verdicts``; ``context``: every connection over TLS
    with it (the servers are TLS twins)."""
    assert run.server_conformance is not None
    progress.total = len(servers) * len(cases)
    try:
        for program in servers:
            verdicts = run.server_conformance.verdicts[program.name]
            record = run.servers[program.name]
            running = None
            try:
                if is_target(program):
                    url = parse_url(program.command[0], allow_remote=False)
                    host, port, path = url.host, url.port, url.path
                else:
                    running = start_server(program, log_dir)
                    host, port, path = "127.0.0.1", running.port, "/"
                    record.info = running.info
                    progress.note(f"- server '{program.name}' ready on port {port}")
            except WsbenchError as exc:
                record.status, record.error = "failed", str(exc)
                progress.note(f"! {exc}")
                progress.done += len(cases)
                continue
            try:
                def done(case: ServerCase, verdict: ServerVerdict, name: str = program.name) -> None:
                    verdicts[case.id] = verdict
                    progress.item(f"{name} {case.id}: {verdict.verdict}")
                    progress.advance()

                asyncio.run(play_all(cases, host, port, path.rstrip("/") or "", jobs, done, context))
            finally:
                if running is not None:
                    problem = running.stop()
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


async def play_all(cases: list[ServerCase], host: str, port: int, base: str, jobs: int,
                   done: Callable[[ServerCase, ServerVerdict], None], context: ssl.SSLContext | None = None) -> None:
    """Every case against one server, ``jobs`` at a time (the heavy ones alone, after the
    others); ``done`` gets each verdict as soon as it is known."""
    slots = asyncio.Semaphore(max(1, jobs))

    async def one(case: ServerCase) -> None:
        async with slots:
            path = f"{base}/conformance/{case.id}"
            try:
                verdict = judge(case, await asyncio.wait_for(play(case, host, port, path, context), CASE_LIMIT_S))
            except asyncio.TimeoutError:
                verdict = ServerVerdict(FAIL, f"the case did not end within {CASE_LIMIT_S:g} s", FAIL, "–")
            except Exception as exc:  # a verdict for every case, even if the client trips over odd input
                verdict = ServerVerdict(FAIL, f"could not be played: {type(exc).__name__}: {exc}", FAIL, "–")
            done(case, verdict)

    await asyncio.gather(*(one(c) for c in cases if not c.heavy))
    for case in (c for c in cases if c.heavy):
        await one(case)
