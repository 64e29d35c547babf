"""A peer that vanishes (issue 34, part 5; docs/misbehave.md, "Peers that vanish"): one
cell of a workload with a ``vanish`` key, run inside a network namespace of its own
(netns.py).

The server (a fresh one: the run's server is only asked its program, started with the
workload's ``server_args``) and the client run
inside the namespace. The client is an ``idle`` workload with one connection and no pings
(its echo checked before the barrier with ``warm``): at its start barrier it holds still,
and there the harness drops every segment of that connection both ways (its port found
in the namespace's TCP table: the server's only established connection), tells it GO, and
watches whether the server lets go of its socket (the socket's inode gone from the
server's descriptors) within ``bound_s``. The client stays alive and silent meanwhile; it
is killed at the end, and the namespace deleted with everything in it.

The sample: ``seconds`` is the time to the server freeing the connection (the bound when
it did not); ``extra.vanish`` has ``freed_s`` (null: not within the bound), ``bound_s``,
``segments_from_server`` (what the server sent towards the vanished peer: pings, a close,
keep-alive probes, each retransmission counted; 0: it sent nothing), ``segments_from_peer``,
``keepalive`` (the kernel's keep-alive timer ran on the server's socket when the peer
vanished: SO_KEEPALIVE) and the socket's TCP state, unacknowledged bytes and
retransmissions when the watch ended.
"""

from __future__ import annotations

import os
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from . import netns, proc_tcp, procs
from .catalog import Program
from .errors import WsbenchError
from .hold import hold_for
from .measure import START_LINE, parse_result
from .model import Sample, Settings
from .paths import ROOT
from .server import RunningServer, ServerHandle, start_server
from .workloads import Workload

POLL_S = 0.05
START_ALLOWANCE_S = 20.0  # for the client to open and check its connection
SETTLE_S = 1.0  # for the server's last bytes to be acknowledged before the peer vanishes


def run_vanish(client: Program, server: ServerHandle, workload: Workload, rep: int, log_dir: Path,
               settings: Settings) -> Sample:
    """The runner's entry (as run_client's): ``server`` names the program only."""
    return measure_vanish(client, server.program, workload, rep, log_dir)


def measure_vanish(client: Program, server: Program, workload: Workload, rep: int, log_dir: Path) -> Sample:
    """One repetition: namespace, server and client, the drop, the watch; everything
    stopped and deleted on every path."""
    assert workload.vanish is not None
    sample = Sample(rep=rep, extra={"vanish": {"bound_s": workload.vanish.bound_s}})  # the cell's mark, even failed
    if workload.server_args:  # e.g. --idle-defaults (servers/README.md item 18)
        sample.extra["server_args"] = list(workload.server_args)
    culprit = f"client '{client.name}' vs server '{server.name}' on '{workload.name}'"
    began = time.monotonic()
    try:
        with netns.Namespace() as ns:
            inside = replace(server, command=tuple(ns.inside([*server.command, *workload.server_args])))
            live = start_server(inside, log_dir / "vanish")
            try:
                _watch(ns, client, live, workload, sample, log_dir)
            finally:
                problem = live.stop()
                if problem and sample.error is None:
                    sample.error = f"server process group: {problem}"
    except WsbenchError as exc:
        sample.error = str(exc)
    sample.wall_s = time.monotonic() - began
    if sample.error is not None:
        sample.error = f"{culprit}: {sample.error}"
    return sample


def _watch(ns: netns.Namespace, client: Program, live: RunningServer, workload: Workload, sample: Sample,
           log_dir: Path) -> None:
    assert workload.vanish is not None
    bound = workload.vanish.bound_s
    log = log_dir / f"client-{client.name}-{live.program.name}-{workload.name}-{sample.rep}.log".replace("/", "~")
    argv = ns.inside([*client.command, "--url", live.url(workload.path), *workload.client_args()])
    hold = hold_for(client.barrier)
    try:
        proc = procs.spawn(argv, cwd=ROOT, env={**os.environ, **hold.env, **client.env}, stderr_path=log,
                           stdin_pipe=hold.stdin)
    except OSError as exc:
        hold.close()
        raise WsbenchError(f"cannot start {client.command[0]}: {exc.strerror}") from None
    hold.attach(proc)
    reader = procs.LineReader(proc)
    try:
        why = _until_start(reader, time.monotonic() + START_ALLOWANCE_S, log)
        if why:
            sample.error = why
            return
        held = proc_tcp.connections_to(live.pid, live.port)
        if len(held) != 1:
            sample.error = (f"the server holds {len(held)} established connections at the client's start barrier; "
                            "a vanishing peer needs exactly one")
            return
        peer = held[0]
        _settled(live, peer)
        ns.drop_port(peer.remote_port)
        t0 = time.monotonic()
        refused = hold.go()
        if refused:
            sample.error = f"start barrier: {refused}"
            return
        freed = _freed_after(live, peer.inode, t0, bound)
        end = proc_tcp.find(live.pid, live.port, peer.remote_port)
        dropped = ns.dropped(peer.remote_port)
        if not live.alive():
            sample.error = f"the server exited while its peer was gone (log: {live.log})"
            return
        sample.seconds = freed if freed is not None else bound
        sample.extra["vanish"].update(_findings(bound, freed, peer, end, dropped))
    finally:
        reader.close()
        hold.close()
        problem = procs.terminate(proc)
        if problem and sample.error is None:
            sample.error = f"client process group: {problem}"


def _settled(live: RunningServer, peer: proc_tcp.TcpSocket) -> None:
    """Wait (up to SETTLE_S) until everything the server sent on the connection is
    acknowledged: the client holds at its barrier once the warm echo came, but its kernel
    may still owe the ACK of it (a delayed ACK, about 40 ms), and dropped with the peer
    that ACK would have the server retransmit the echo, counted as if it were sent towards
    the vanished peer (test_vanish.py failed so: 5 segments, 1,028 B unacknowledged)."""
    deadline = time.monotonic() + SETTLE_S
    while peer.tx_queue and time.monotonic() < deadline:
        time.sleep(POLL_S / 5)
        peer = proc_tcp.find(live.pid, live.port, peer.remote_port) or peer


def _until_start(reader: procs.LineReader, deadline: float, log: Path) -> str | None:
    """Read the client's lines up to its start barrier; None, or why it never got there."""
    while True:
        line = reader.readline(deadline)
        if line is None:
            return (f"the client exited before {START_LINE} (log: {log})" if reader.eof
                    else f"no {START_LINE} within {START_ALLOWANCE_S:g} s (log: {log})")
        if line == START_LINE:
            return None
        if line.startswith("{"):
            result = parse_result(line)
            return str(result.get("error", line))[:300]


def _freed_after(live: RunningServer, inode: int, t0: float, bound: float) -> float | None:
    """Seconds from the drop until the server no longer holds the socket, or None."""
    while True:
        now = time.monotonic()
        held = proc_tcp.held_inodes(live.pid)
        if held is not None and inode not in held:
            return now - t0
        if now - t0 >= bound:
            return None
        time.sleep(POLL_S)


def _findings(bound: float, freed: float | None, peer: proc_tcp.TcpSocket, end: proc_tcp.TcpSocket | None,
              dropped: dict[str, int]) -> dict[str, Any]:
    return {
        "bound_s": bound,
        "freed_s": round(freed, 3) if freed is not None else None,
        "peer_port": peer.remote_port,
        "keepalive": peer.timer == "keepalive",
        "segments_from_server": dropped["to_port"],
        "segments_from_peer": dropped["from_port"],
        "end_state": end.state if end else "gone",
        "end_unacked_bytes": end.tx_queue if end else None,
        "end_retransmits": end.retransmits if end else None,
    }
