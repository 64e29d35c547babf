"""One start for all shards of a repetition, carried by the engine (Dask's coordination
primitives, held by the scheduler).

Per repetition of a cell (``Names``):

1. every shard runs its client; at ``WSBENCH-START`` (warm-up done, the client waiting on
   its stdin) the shard puts "ready" on the ``ready`` queue and waits for the ``verdict``
   variable to be set (one request to the scheduler, answered when it is);
   a shard whose client failed before it puts "not ready" with the reason instead;
2. the conductor takes one message per shard from the ``ready`` queue, for at most the
   readiness timeout. All ready: it takes the server's start readings (on the server's
   host) and sets the verdict "go". A shard not ready in time, or failed: the verdict is
   "abort: ..." (the run fails, naming the shard's host); the shards' clients are stopped;
3. each shard, answered, notes its time and writes ``GO`` to its client: every
   shard's ``GO`` comes from the one release, so the measured phases overlap by
   construction, up to the skew the release takes to reach them (measured: each shard's
   wall clock at its wake-up, ``go_wall``);
4. at its result line each shard puts "ended" on the ``ended`` queue and holds its client
   until the conductor, having heard from every shard, has taken the server's end
   readings and set ``observed``.

Every wait is bounded; a shard that cannot report (its client failed after the barrier)
reports "ended" when its measurement returns, so the conductor never waits on it longer
than its client's own timeout.
"""

from __future__ import annotations

import signal
import threading
import time
from typing import Any, Callable, Protocol

import distributed as d  # the engine (requirements.txt)

from .. import procs

GO = "go"
SLACK_S = 30.0  # beyond the readiness timeout, for a conductor that is itself late


class Names:
    """The engine's objects of one barrier: unique per run and repetition."""

    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.ready, self.verdict, self.ended, self.observed = (
            f"{prefix}-{what}" for what in ("ready", "verdict", "ended", "observed"))


class Readings(Protocol):
    """The server's readings at both ends of the union of the phases (or none)."""

    def start(self) -> None: ...

    def end(self) -> dict[str, Any]: ...


def _take(queue: Any, timeout: float) -> Any | None:
    """One item, or None when none came within ``timeout``."""
    if timeout <= 0:
        return None
    try:
        return queue.get(timeout=timeout)
    except (TimeoutError, OSError):
        return None


def conduct(client: Any, names: Names, shards: int, ready_timeout_s: float, phase_timeout_s: float,
            readings: Readings | None) -> dict[str, Any]:
    """Release the barrier once every shard is ready (or abort it), then wait for every
    shard's end and take the server's end readings. Returns what happened:
    ``verdict``, ``ready`` (per shard: true or the reason it was not), ``release_wall``
    (this host's wall clock just before the verdict was set), ``ended`` and ``server``."""
    ready_q = d.Queue(names.ready, client=client)
    heard: dict[int, Any] = {}
    deadline = time.monotonic() + ready_timeout_s
    while len(heard) < shards:
        item = _take(ready_q, deadline - time.monotonic())
        if item is None:
            break
        heard[int(item["shard"])] = True if item.get("ready") else str(item.get("why") or "failed")
        if heard[int(item["shard"])] is not True:
            break  # one shard cannot start: nobody will
    failed = {i: why for i, why in heard.items() if why is not True}
    missing = [i for i in range(1, shards + 1) if i not in heard]
    verdict = GO
    if failed or missing:
        verdict = "abort: " + "; ".join([f"shard {i} failed before the barrier: {why}" for i, why in failed.items()]
                                        + [f"shard {i} was not ready within {ready_timeout_s:g} s" for i in missing])
    server_problem = None
    if verdict == GO and readings is not None:
        try:
            readings.start()
        except Exception as exc:  # a reading that fails leaves the server's figures empty, not the run
            server_problem = f"server start reading: {exc}"
    release_wall = time.time()
    d.Variable(names.verdict, client=client).set(verdict)  # the release: every waiting shard is answered
    out: dict[str, Any] = {"verdict": verdict, "ready": {str(i): heard.get(i, "silent") for i in range(1, shards + 1)},
                           "missing": missing, "failed": {str(i): why for i, why in failed.items()},
                           "release_wall": release_wall, "ended": [], "server": None}
    if verdict != GO:
        d.Event(names.observed, client=client).set()
        return out
    ended_q = d.Queue(names.ended, client=client)
    deadline = time.monotonic() + phase_timeout_s
    ended: set[int] = set()
    while len(ended) < shards:
        item = _take(ended_q, deadline - time.monotonic())
        if item is None:
            break
        ended.add(int(item["shard"]))
    out["ended"] = sorted(ended)
    if readings is not None and server_problem is None:
        try:
            out["server"] = readings.end()
        except Exception as exc:
            server_problem = f"server end reading: {exc}"
    if server_problem:
        out["server"] = {"reading_errors": [server_problem]}
    d.Event(names.observed, client=client).set()
    return out


def abort(client: Any, names: Names, why: str) -> None:
    """Release whoever waits on this barrier with an abort verdict (Ctrl-C, a lost task)."""
    try:
        d.Variable(names.verdict, client=client).set(f"abort: {why}")
        d.Event(names.observed, client=client).set()
    except Exception:  # the engine may be gone already: nothing waits then
        pass


def forget(client: Any, names: Names) -> None:
    """Drop the barrier's objects from the scheduler once every task of it is done."""
    for close in (lambda: d.Variable(names.verdict, client=client).delete(),
                  lambda: d.Queue(names.ready, client=client).close(),
                  lambda: d.Queue(names.ended, client=client).close(),
                  lambda: d.Event(names.observed, client=client).clear()):
        try:
            close()
        except Exception:
            pass


class ShardHook:
    """The barrier on a shard's side, plugged into ``measure.run_client`` as its
    ``PhaseObserver``: ``started`` is where the harness writes ``GO``."""

    def __init__(self, client: Any, names: Names, shard: int, ready_timeout_s: float, phase_timeout_s: float,
                 kill: Callable[[int], str | None] | None = None) -> None:
        self.client, self.names, self.shard = client, names, shard
        self.ready_timeout_s, self.phase_timeout_s = ready_timeout_s, phase_timeout_s
        self.kill = kill or _kill_group
        self.kill_problem: str | None = None  # a kill of the client the kernel refused
        self.pid: int | None = None
        self.said_ready = False
        self.said_ended = False
        self.go_wall: float | None = None  # this host's wall clock when the release reached the shard
        self.end_wall: float | None = None  # ... when the client's result line came
        self._lock = threading.Lock()

    def spawned(self, pid: int) -> str | None:
        self.pid = pid
        threading.Thread(target=self._watch, name=f"wsbench-shard-{self.shard}-watch", daemon=True).start()
        return None

    def _watch(self) -> None:
        """An abort verdict stops a client that has not reached its barrier yet (one that
        hangs before WSBENCH-START would otherwise hold the shard until its own timeout)."""
        try:
            verdict = d.Variable(self.names.verdict, client=self.client).get(timeout=self.ready_timeout_s + SLACK_S)
        except Exception:  # no verdict (the run is going away): nothing to stop here
            return
        with self._lock:
            if verdict is not None and verdict != GO and not self.said_ready and self.pid is not None:
                self.kill_problem = self.kill(self.pid)

    def started(self) -> str | None:
        with self._lock:
            if self.kill_problem:  # the abort could not stop the client: it must not start measuring
                return f"start barrier: aborted, and {self.kill_problem}"
            d.Queue(self.names.ready, client=self.client).put({"shard": self.shard, "ready": True})
            self.said_ready = True
        try:
            verdict = d.Variable(self.names.verdict, client=self.client).get(timeout=self.ready_timeout_s + SLACK_S)
        except TimeoutError:
            return f"start barrier: not released within {self.ready_timeout_s + SLACK_S:g} s"
        self.go_wall = time.time()  # then measure.run_client reads the client's CPU clock and writes GO
        return None if verdict == GO else f"start barrier: {verdict}"

    def ended(self) -> str | None:
        self.end_wall = time.time()
        self.say_ended()
        if not d.Event(self.names.observed, client=self.client).wait(timeout=self.phase_timeout_s + SLACK_S):
            return "end barrier: the server's end reading did not come"
        return None

    def say_ended(self) -> None:
        if not self.said_ended:
            d.Queue(self.names.ended, client=self.client).put({"shard": self.shard})
            self.said_ended = True

    def finish(self, error: str | None) -> None:
        """After the measurement: a shard that never got to the barrier or to its end says
        so, so that the conductor does not wait for it."""
        with self._lock:
            if not self.said_ready:
                d.Queue(self.names.ready, client=self.client).put(
                    {"shard": self.shard, "ready": False, "why": error or "its client ended before WSBENCH-START"})
                self.said_ready = True
                return
        self.say_ended()


def _kill_group(pid: int) -> str | None:
    return procs.signal_group(pid, signal.SIGKILL)  # the client leads its own process group (procs.spawn)
