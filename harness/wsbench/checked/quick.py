"""The quick subset: a few cases of invalid UTF-8 and of masking per side, played at
verify time when no results file speaks for a program (origins.py).

Servers: the server room's raw-byte client (server_conformance/) plays the subset against
a server started for it alone (the measured server never sees malformed input; a server
that exits mid-subset fails the case it exited in), or against a ``--target`` where it
runs, every server at once, ``JOBS`` connections each. Clients: the client room's peer
(conformance/) plays it against one client process per case, ``JOBS`` at a time, while
the servers play theirs. No case with a pause: a fail-fast case asks when a program
checks, not whether."""

from __future__ import annotations

import asyncio
import ssl
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence, TypeVar

from .. import certificates
from ..catalog import Program
from ..conformance import cases as client_cases, schedule as client_schedule
from ..conformance.peer import Peer
from ..errors import WsbenchError
from ..model import ServerVerdict, Verdict
from ..server_conformance import server_cases, server_schedule
from ..target import is_target, parse_url

JOBS = 4  # connections (servers) or client processes at a time
SERVER_CASES = ("1-unmasked-text", "1-unmasked-binary", "1-unmasked-ping", "1-unmasked-close", "6-invalid-byte-ff",
                "6-invalid-surrogate-a080", "6-invalid-overlong-slash-2-per-byte", "6-split-invalid",
                "6-truncated-at-end", "7-close-reason-invalid-ff")
CLIENT_CASES = ("1-masked-text", "6-invalid-byte-ff", "6-invalid-overlong-slash-2", "7-close-reason-invalid-ff")

C = TypeVar("C", server_cases.ServerCase, client_cases.Case)


def _subset(table: Sequence[C], chosen: tuple[str, ...]) -> list[C]:
    """``chosen`` as the room's table has them (a case renamed there fails the tests, not
    the run: test_conformance_marks)."""
    return [c for c in table if c.id in chosen]


def server_subset() -> list[server_cases.ServerCase]:
    return _subset(server_cases.CASES, SERVER_CASES)


def client_subset() -> list[client_cases.Case]:
    return _subset(client_cases.CASES, CLIENT_CASES)


@dataclass
class _Live:
    """A server while the subset is played against it."""

    program: Program
    endpoint: server_schedule.Endpoint
    started: server_schedule.Started | None  # a catalog server started for the subset; None: a target
    context: ssl.SSLContext | None
    verdicts: dict[str, ServerVerdict] = field(default_factory=dict)

    def done(self, case: server_cases.ServerCase, verdict: ServerVerdict) -> None:
        self.verdicts[case.id] = self.started.check(case, verdict) if self.started is not None else verdict


def _live(program: Program, log_dir: Path) -> _Live:
    """Where the subset reaches ``program``: a catalog server started for it, or a loopback
    target; a WsbenchError says why not."""
    context = certificates.client_context(certificates.load_certs()) if program.secure else None
    if is_target(program):
        url = parse_url(program.command[0], allow_remote=False)
        return _Live(program, server_schedule.Endpoint(url.host, url.port, lambda case: url.path), None, context)
    endpoint = server_schedule.Endpoint("127.0.0.1", 0, lambda case: f"/conformance/{case.id}")
    return _Live(program, endpoint, server_schedule.Started(program, log_dir / "conformance", endpoint), context)


def play_servers(programs: Iterable[Program], cases: list[server_cases.ServerCase],
                 log_dir: Path) -> dict[str, dict[str, ServerVerdict] | str]:
    """The subset against every server at once (a server that lets a case through keeps
    the client waiting for a reaction: ``server_judge``), ``JOBS`` connections each; per
    server its verdicts, or why they could not be played. Every server started here is
    stopped by its process group whatever happens."""
    out: dict[str, dict[str, ServerVerdict] | str] = {}
    live: list[_Live] = []
    try:
        for program in programs:
            try:
                live.append(_live(program, log_dir))
            except WsbenchError as exc:
                out[program.name] = str(exc)

        async def every() -> None:
            await asyncio.gather(*(server_schedule.play_all(cases, s.endpoint, JOBS, s.done, s.context,
                                                            settle=s.started is not None) for s in live))

        asyncio.run(every())
    finally:
        for s in live:
            if s.started is not None:
                s.started.stop()
    out.update({s.program.name: s.verdicts for s in live})
    return out


def cannot_play_client(client: Program) -> str | None:
    """Why a client cannot play the subset (None: it can)."""
    missing = client.missing()
    if missing:
        return f"{missing[0]} is missing; run: make setup"
    return client.cannot(client_schedule.KIND, ())


def play_clients(clients: Iterable[Program], cases: list[client_cases.Case], log_dir: Path,
                 stop: threading.Event) -> dict[str, dict[str, Verdict]]:
    """The subset against every client, one process per case, ``JOBS`` at a time; every
    process is killed by its group whatever happens (``schedule.play``), and once ``stop``
    is set (Ctrl-C in the thread that waits for the servers)."""
    todo = [(client, case) for client in clients for case in cases]
    out: dict[str, dict[str, Verdict]] = {client.name: {} for client, _ in todo}
    if not todo:
        return out
    (log_dir / "conformance").mkdir(parents=True, exist_ok=True)
    peer = Peer()
    pool = ThreadPoolExecutor(max_workers=JOBS, thread_name_prefix="quick-conformance")
    try:
        peer.start()
        running: dict[Future[Verdict], tuple[Program, client_cases.Case]] = {
            pool.submit(client_schedule.play, peer, client, case, log_dir / "conformance", stop): (client, case)
            for client, case in todo}
        wait(running)
        for future, (client, case) in running.items():
            out[client.name][case.id] = future.result()
    finally:
        stop.set()
        pool.shutdown(wait=True, cancel_futures=True)
        peer.stop()
    return out
