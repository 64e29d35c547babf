"""Every selected client against every selected case, a few at a time.

Each client run is one process (``--kind observe``, clients/README.md) in its own process
group, started with ``procs.spawn`` and killed by PID whatever happens: after its result,
on a timeout, on an error and on Ctrl-C (``procs.kill_all`` in the CLI). The peer plays
the case; the judge turns what the peer saw and what the client reported into a verdict,
which goes into the run's ``conformance`` section as soon as it is known.

With ``--tls`` (tls_setup.py) the peer speaks TLS and every client runs over ``wss://``
with its catalog trust; a client that cannot speak TLS gets ``n/a`` for every case, with
the catalog's reason. The TLS-failure cases are judged by tls_judge.py.
"""

from __future__ import annotations

import os
import subprocess
import threading
import time
import uuid
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import environment, newrun, procs
from ..catalog import Catalog, Program
from ..logs import last_line
from ..measure import parse_result
from ..paths import ROOT
from ..progress import Progress
from ..model import CaseRecord, Conformance, Run, now, write_json
from .cases import Case
from .judge import FAIL, Verdict, judge
from .peer import Observation, Peer
from .tls_judge import judge_tls
from .tls_setup import TlsPlan, unable

CLIENT_SLACK_S = 3.0  # beyond the script and the reaction time: the client's own --timeout-ms
STARTUP_S = 15.0  # beyond --timeout-ms: runtime start-up, printing, exiting
EXIT_WAIT_S = 5.0  # after the result line, for the process to exit by itself
CONNECT_WAIT_S = 1.0  # after the client is gone, for a connection that never came
POLL_S = 0.25  # how often a waiting runner thread looks whether the run is being stopped
KIND = "observe"
DEFAULT_JOBS = 4  # client processes at a time
NOT_APPLICABLE = "n/a"


@dataclass(frozen=True)
class ClientRun:
    """How one client run ended, before judging."""

    report: dict[str, Any] | None  # the result line, if any
    problem: str | None  # crashed, timed out, printed an error, ...


def new_run(clients: list[Program], cases: list[Case], catalog: Catalog, argv: list[str], jobs: int,
            tls: TlsPlan | None = None) -> Run:
    """``clients`` as they run (tls_setup.over_tls); ``settings.tls``: null, or the
    certificates (mode "on")."""
    return newrun.new_run(catalog, argv, [], clients, {"jobs": jobs, "tls": tls.settings if tls else None},
                        conformance=Conformance([CaseRecord.from_json(c.to_json()) for c in cases],
                                                {c.name: {} for c in clients}))


Judge = Callable[[Case, Observation | None, dict[str, Any] | None, str | None], Verdict]


def execute(clients: list[Program], cases: list[Case], run: Run, log_dir: Path, jobs: int,
            progress: Progress, results: Path, tls: TlsPlan | None = None, *, section: Conformance | None = None,
            judge_with: Judge | None = None, heavy_alone: bool = False) -> Run:
    """Fill ``run.conformance.verdicts`` (or ``section``'s: another room's, e.g.
    deflate_conformance/, judged by its ``judge_with``), writing the run file ``results``
    after every verdict (without the summaries) and once more at the end. With
    ``heavy_alone`` the heavy cases are played one at a time after all the others."""
    section = section or run.conformance
    assert section is not None
    verdicts = section.verdicts
    log_dir.mkdir(parents=True, exist_ok=True)
    todo: list[tuple[Program, Case]] = []
    for client in clients:
        why = _cannot(client)
        if why:
            run.clients[client.name].status, run.clients[client.name].error = "failed", why
            progress.note(f"! client '{client.name}': {why}")
            continue
        why = unable(client, tls)
        if why:
            run.clients[client.name].status = NOT_APPLICABLE
            verdicts[client.name] = {case.id: Verdict(NOT_APPLICABLE, why) for case in cases}
            progress.note(f"- client '{client.name}': n/a over TLS: {why}")
            continue
        todo += [(client, case) for case in cases]
    # the slow cases first, so they do not end up alone at the end (or, heavy_alone, the heavy ones last)
    todo.sort(key=lambda cc: -(cc[1].script_seconds() + cc[1].react_s))
    later = [cc for cc in todo if cc[1].heavy] if heavy_alone else []
    todo = [cc for cc in todo if cc not in later] if later else todo
    progress.total = len(todo) + len(later)
    pool = ThreadPoolExecutor(max_workers=max(1, jobs), thread_name_prefix="conformance")
    stop = threading.Event()  # set on the way out (Ctrl-C): clients still running are killed
    peer = Peer(tls.contexts if tls else None)
    try:
        peer.start()
        for batch in ([todo] + [[cc] for cc in later]):  # heavy_alone: each heavy case a batch of its own
            running: dict[Future[Verdict], tuple[Program, Case]] = {
                pool.submit(play, peer, client, case, log_dir, stop, judge_with): (client, case)
                for client, case in batch}
            while running:
                done, _ = wait(running, return_when=FIRST_COMPLETED)
                for future in done:
                    client, case = running.pop(future)
                    verdict = future.result()
                    verdicts[client.name][case.id] = verdict
                    progress.item(f"{client.name} {case.id}: {verdict.verdict}")
                    progress.advance()
                    write_json(run, results, summaries=False)
        run.complete = True
    finally:
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        procs.kill_all()
        pool.shutdown(wait=True)
        peer.stop()
        run.finished = now()
        run.environment["load_average_after"] = environment.load_average()
        progress.finish()
        write_json(run, results, summaries=False)
    return run


def _cannot(client: Program) -> str | None:
    missing = client.missing()
    if missing:
        return f"{missing[0]} is missing; run: make setup"
    if client.cannot(KIND, ()):
        return f"does not run the '{KIND}' kind"
    return None


def play(peer: Peer, client: Program, case: Case, log_dir: Path, stop: threading.Event,
         judge_with: Judge | None = None) -> Verdict:
    """One client process against one case, judged (by ``judge_with`` if given)."""
    token = f"{client.name}.{uuid.uuid4().hex[:12]}"
    pending = peer.expect(token, case)
    timeout_s = case.script_seconds() + case.react_s + CLIENT_SLACK_S
    argv = [*client.command, "--kind", KIND, "--url", pending.url, "--timeout-ms", str(int(timeout_s * 1000))]
    log = log_dir / f"conformance-{client.name}-{case.id}.log"
    try:
        outcome = run_client(argv, client.env, log, timeout_s + STARTUP_S, stop)
        seen = pending.observation.connected or pending.observation.tls_handshake is not None
        obs = pending.wait(CONNECT_WAIT_S) or (pending.wait(case.react_s + 2.0) if seen else None)
    finally:
        peer.release(pending)
    verdict_of = judge_with or (judge_tls if case.expect.verdict in ("refuse", "fault") else judge)
    try:
        return verdict_of(case, obs, outcome.report, outcome.problem)
    except Exception as exc:  # a verdict for every case, even if the judge trips over odd input
        return Verdict(FAIL, f"could not be judged: {type(exc).__name__}: {exc}")


def run_client(argv: list[str], env_extra: dict[str, str], log: Path, limit_s: float,
               stop: threading.Event) -> ClientRun:
    """Run the client to its result line (or ``limit_s``, or ``stop``), then make sure its
    group is gone."""
    env = {k: v for k, v in os.environ.items() if k != "WSBENCH_HOLD"}  # no barrier, no hold
    env.update(env_extra)
    if stop.is_set():
        return ClientRun(None, "not started: the run was interrupted")
    try:
        proc = procs.spawn(argv, cwd=ROOT, env=env, stderr_path=log)
    except OSError as exc:
        return ClientRun(None, f"cannot start {argv[0]}: {exc.strerror}")
    deadline = time.monotonic() + limit_s
    reader = procs.LineReader(proc)
    report: dict[str, Any] | None = None
    stray = ""
    try:
        while report is None and not stop.is_set():
            line = reader.readline(min(deadline, time.monotonic() + POLL_S))
            if line is None:
                if reader.eof or time.monotonic() >= deadline:
                    break
                continue
            if line.startswith("{"):
                report = parse_result(line)
            elif line.strip() and line.strip() != "WSBENCH-START":
                stray = line.strip()
    finally:
        reader.close()
    problem = None
    if report is None and stop.is_set():
        problem = "interrupted"
    elif report is None and not reader.eof:
        problem = f"no result within {limit_s:.0f} s (log: {log})"
    else:
        try:
            proc.wait(timeout=max(0.1, min(EXIT_WAIT_S, deadline - time.monotonic())))
        except subprocess.TimeoutExpired:  # still running: killed below
            problem = f"did not exit after its result (log: {log})"
    kill_problem = procs.terminate(proc, grace_s=0.5) if proc.poll() is None else procs.forget(proc)
    if report is not None and "error" in report:
        problem = problem or str(report["error"]).splitlines()[0][:200]
        report = None
    elif report is None and problem is None:
        said = f"; last line: {stray[:120]!r}" if stray else last_line(log)
        problem = f"exited with code {proc.returncode} without a result line (log: {log}{said})"
    elif problem is None and proc.returncode not in (0, None):
        problem = f"exited with code {proc.returncode} after its result (log: {log})"
    return ClientRun(report, problem or kill_problem)

