"""A cap on memory while a sample runs (issue 34, "limits named, nothing crashes"): a
workload's ``server_rss_cap_mib`` (workloads.py; it needs ``fresh_server``) has a thread
read the server's resident memory (and the client's: the same cap bounds both sides) from
/proc every ``POLL_S`` while the client runs. The first reading past the cap kills the
server's process group and the client's, by their PIDs (SIGKILL: a process past its cap
is not asked), and the sample becomes a measured outcome, not a failure: its
``extra.stopped`` says ``stopped: server RSS passed 2 GiB after 7.3 s`` (seconds since the
client's start barrier, or since it was started when it had not reached it) and it keeps
the readings taken so far (``extra.marks``) beside ``extra.rss_cap`` (the cap, the side,
the reading that passed it)."""

from __future__ import annotations

import signal
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from . import procfs, procs

POLL_S = 0.1


def cap_words(mib: int) -> str:
    """2048 -> "2 GiB", 150 -> "150 MiB"."""
    return f"{mib // 1024} GiB" if mib % 1024 == 0 else f"{mib} MiB"


@dataclass
class Tripped:
    """What passed the cap, and when (time.monotonic)."""

    side: str  # "server" or "client"
    rss_kib: int
    at: float


@dataclass
class RssCap:
    """The watcher of one sample: ``start()`` once the client runs, ``finish()`` once its
    lines are done (what passed the cap, or None)."""

    cap_mib: int
    server_pid: int
    client_pid: int
    tripped: Tripped | None = None
    problems: list[str] = field(default_factory=list)  # a kill the kernel refused
    _done: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> "RssCap":
        self._thread = threading.Thread(target=self._watch, name="rss-cap", daemon=True)
        self._thread.start()
        return self

    def _watch(self) -> None:
        cap_kib = self.cap_mib * 1024
        while not self._done.wait(POLL_S):
            for side, pid in (("server", self.server_pid), ("client", self.client_pid)):
                rss = procfs.rss_kib(pid)
                if rss is not None and rss > cap_kib:
                    self.tripped = Tripped(side, rss, time.monotonic())
                    for group in (self.server_pid, self.client_pid):
                        problem = procs.signal_group(group, signal.SIGKILL)
                        if problem:
                            self.problems.append(problem)
                    return

    def finish(self) -> Tripped | None:
        self._done.set()
        if self._thread is not None:
            self._thread.join()
        return self.tripped

    def outcome(self, since: float) -> tuple[str, dict[str, Any]]:
        """The one line and the record of a tripped cap (``since``: the start barrier's
        time.monotonic, or the client's start)."""
        assert self.tripped is not None
        after = self.tripped.at - since
        line = f"stopped: {self.tripped.side} RSS passed {cap_words(self.cap_mib)} after {after:.1f} s"
        return line, {"cap_mib": self.cap_mib, "side": self.tripped.side, "rss_kib": self.tripped.rss_kib,
                      "after_s": round(after, 3)}
