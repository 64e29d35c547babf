"""The ``startup`` section (``wsbench startup``, ``wsbench profile --startup``, schema 4):
per client and server a ``StartupTime`` (hyperfine's figures, or why there are none)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Figures:
    """hyperfine's figures of one command, in seconds."""

    mean_s: float
    stddev_s: float
    median_s: float
    min_s: float
    max_s: float
    runs: int

    def to_json(self) -> dict[str, Any]:
        return {"mean_s": self.mean_s, "stddev_s": self.stddev_s, "median_s": self.median_s, "min_s": self.min_s,
                "max_s": self.max_s, "runs": self.runs}

    @staticmethod
    def from_json(d: dict[str, Any]) -> Figures:
        return Figures(d["mean_s"], d["stddev_s"], d["median_s"], d["min_s"], d["max_s"], d["runs"])


@dataclass
class StartupTime:
    """One client's or server's start-up: hyperfine's figures, or why there are none."""

    command: str | None = None  # None: never run (e.g. not built)
    figures: Figures | None = None  # None: see error
    error: str | None = None
    peak_rss_kib: int | None = None
    held_run: bool = False  # a client timed: one more run, held after its result, read peak_rss_kib

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {} if self.command is None else {"command": self.command}
        if self.figures is not None:
            out.update(self.figures.to_json())
        out["error"] = self.error
        if self.held_run:
            out["peak_rss_kib"] = self.peak_rss_kib
        return out

    @staticmethod
    def from_json(d: dict[str, Any]) -> StartupTime:
        return StartupTime(d.get("command"), Figures.from_json(d) if d.get("mean_s") is not None else None,
                           d.get("error"), d.get("peak_rss_kib"), "peak_rss_kib" in d)


@dataclass
class Startup:
    what: str  # what was timed, and how
    tool: str  # hyperfine's version
    warmup: int
    runs: int
    dir: str | None = None
    clients: dict[str, StartupTime] = field(default_factory=dict)
    servers: dict[str, StartupTime] = field(default_factory=dict)

    def failed(self) -> list[tuple[str, str, str]]:
        """(kind, name, error) of every client and server without figures."""
        return [(kind, name, t.error) for kind, times in (("clients", self.clients), ("servers", self.servers))
                for name, t in times.items() if t.error]

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"what": self.what, "tool": self.tool, "warmup": self.warmup, "runs": self.runs}
        if self.dir is not None:
            out["dir"] = self.dir
        out["clients"] = {k: v.to_json() for k, v in self.clients.items()}
        out["servers"] = {k: v.to_json() for k, v in self.servers.items()}
        return out

    @staticmethod
    def from_json(d: dict[str, Any]) -> Startup:
        return Startup(d.get("what", ""), d.get("tool", ""), d.get("warmup", 0), d.get("runs", 0), d.get("dir"),
                       {k: StartupTime.from_json(v) for k, v in (d.get("clients") or {}).items()},
                       {k: StartupTime.from_json(v) for k, v in (d.get("servers") or {}).items()})
