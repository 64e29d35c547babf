"""A run: its ``Cell``s of ``Sample``s, its programs (``ProgramRecord``), its ``Settings``,
and its side sections (conformance.py, server_conformance.py, profiles.py, startup.py, gate.py,
counts.py, arch_footprint.py); a program's
conformance summary is program_checks.py. Nothing here
runs a process or reads a file (runfile.py reads and writes them)."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ..metrics import METRICS
from ..stats import Summary, summarize
from .conformance import Conformance
from .counts import InstructionCounts
from .arch_footprint import Footprint
from .deflate_conformance import DeflateConformance
from .gate import Gate
from .profiles import Profiles
from .program_checks import ConformanceSummary
from .schema import SCHEMA, SCHEMA_VERSION
from .server_conformance import ServerConformance
from .startup import Startup

if TYPE_CHECKING:
    from ..pinning import Pinning


def now() -> str:
    """A run's time stamps: UTC, to the second."""
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


@dataclass(frozen=True)
class Settings:
    """How every cell of a run is measured (recorded with the run)."""

    min_seconds: float = 1.0  # floor on the measured phase of the kinds that have one
    verify: str = "on"  # "off": clients check no echo; "both": every client also runs unchecked
    # (as "<name>/unchecked"), to measure what the checks cost
    pinning: Pinning | None = None  # client and server on separate cores
    tls: dict[str, Any] | None = None  # the TLS axis and the servers' certificate (schema 7)
    deflate: dict[str, Any] | None = None  # the deflate axis: {"mode": "on"|"both"}, None when off (schema 12)

    def to_json(self) -> dict[str, Any]:
        return {"min_seconds": self.min_seconds, "verify": self.verify,
                "pinning": self.pinning.to_json() if self.pinning else None, "tls": self.tls,
                "deflate": self.deflate}


@dataclass
class Sample:
    """What one repetition measured; ``error`` is set when it failed."""

    rep: int
    error: str | None = None
    messages: int | None = None
    bytes: int | None = None
    seconds: float | None = None
    msgs_per_s: float | None = None
    mb_per_s: float | None = None
    errors: int | None = None
    client_cpu_s: float | None = None
    client_cpu_method: str | None = None  # "clock" (held client) or "rusage" (fallback)
    server_cpu_s: float | None = None
    client_peak_rss_kib: int | None = None
    server_peak_rss_kib: int | None = None
    exit_code: int | None = None
    wall_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # the kind's own result keys
    reading_errors: list[str] = field(default_factory=list)  # readings left empty, and why
    barrier_s: float | None = None  # START line seen until GO written (the readings' cost)

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Cell:
    workload: str
    server: str
    client: str
    blocked: str | None = None  # why the cell could not run at all (a failure)
    na: str | None = None  # why the pair cannot express this workload (not a failure)
    samples: list[Sample] = field(default_factory=list)
    # Summaries are bootstrapped, so they are computed once per metric and sample count.
    _cache: dict[tuple[str, int, int], Summary | None] = field(default_factory=dict, repr=False,
                                                               compare=False)

    @property
    def key(self) -> str:
        return f"{self.workload}/{self.server}/{self.client}"

    @property
    def ok_samples(self) -> list[Sample]:
        return [s for s in self.samples if s.ok]

    @property
    def status(self) -> str:
        if self.na:
            return "n/a"
        if self.blocked:
            return "blocked"
        if not self.samples:
            return "pending"
        ok = len(self.ok_samples)
        return "ok" if ok == len(self.samples) else "failed" if ok == 0 else "partial"

    @property
    def errors(self) -> list[str]:
        return [s.error for s in self.samples if s.error]

    def summary(self, metric: str) -> Summary | None:
        key = (metric, id(self.samples), len(self.samples))
        if key not in self._cache:
            get = METRICS[metric].get
            self._cache[key] = summarize([v for v in (get(s) for s in self.ok_samples) if v is not None])
        return self._cache[key]

    def summaries(self) -> dict[str, Summary | None]:
        return {m: self.summary(m) for m in METRICS}

    def to_json(self, summaries: bool = True) -> dict[str, Any]:
        out = {
            "workload": self.workload, "server": self.server, "client": self.client,
            "status": self.status, "blocked": self.blocked, "na": self.na, "errors": self.errors,
            "samples": [s.to_json() for s in self.samples],
        }
        if summaries:
            out["summary"] = {m: v.to_json() for m, v in self.summaries().items() if v}
        return out


@dataclass
class ProgramRecord:
    """A server or client as it was in this run."""

    name: str
    label: str
    runtime: str
    command: list[str]
    status: str = "ok"  # ok, failed
    error: str | None = None
    checks: list[str] = field(default_factory=list)
    cpus: list[int] | None = None  # servers: the CPUs it was allowed to run on, when pinned
    echo_checks: bool = True  # clients: False for the unchecked twins of --verify both
    target: str | None = None  # servers: the URL of a server wsbench did not start (--target)
    readings: str | None = None  # servers: where its CPU and RSS were read, or "n/a (external)"
    tls: dict[str, Any] | None = None  # servers over wss:// (NAME/wss): the certificate presented
    expect: dict[str, Any] | None = None  # what it must report of itself (runtimes.toml; schema 9)
    info: dict[str, Any] | None = None  # servers: what their WSBENCH-INFO line said (schema 9)
    barrier: str | None = None  # clients: how they took the barriers, "stdin" or "http" (schema 9)
    conformance: ConformanceSummary | None = None  # wsbench run: what it checks, and whence (schema 11)
    deflate: dict[str, Any] | None = None  # runs with the deflate axis: how it compresses, or why not (schema 12)

    def to_json(self) -> dict[str, Any]:
        out = dict(self.__dict__)
        out["conformance"] = self.conformance.to_json() if self.conformance is not None else None
        return out


@dataclass
class Run:
    created: str
    command: list[str]
    suite: str | None
    repetitions: int
    environment: dict[str, Any]
    workloads: dict[str, dict[str, Any]]
    servers: dict[str, ProgramRecord]
    clients: dict[str, ProgramRecord]
    cells: list[Cell]
    finished: str | None = None
    complete: bool = False
    settings: dict[str, Any] = field(default_factory=dict)
    conformance: Conformance | None = None  # wsbench conformance: cases and verdicts
    profiles: Profiles | None = None  # wsbench profile: profiled cells and their files
    startup: Startup | None = None  # wsbench startup: start-up times (hyperfine)
    gate: Gate | None = None  # wsbench gate: a baseline or a gate report
    server_conformance: ServerConformance | None = None  # wsbench conformance --servers (schema 10)
    deflate_conformance: DeflateConformance | None = None  # wsbench conformance --deflate (schema 14)
    counts: InstructionCounts | None = None  # wsbench count: instructions per message by arch (schema 16)
    footprint: Footprint | None = None  # wsbench footprint: sizes and start-up memory by arch (schema 16)

    def to_json(self, summaries: bool = True) -> dict[str, Any]:
        """``summaries=False`` leaves out the per-cell statistics (checkpoints mid-run)."""
        return {
            "schema": SCHEMA, "schema_version": SCHEMA_VERSION,
            "created": self.created, "finished": self.finished, "complete": self.complete,
            "command": self.command, "suite": self.suite, "repetitions": self.repetitions,
            "settings": self.settings, "environment": self.environment, "workloads": self.workloads,
            "servers": {k: v.to_json() for k, v in self.servers.items()},
            "clients": {k: v.to_json() for k, v in self.clients.items()},
            "cells": [c.to_json(summaries) for c in self.cells],
            "conformance": self.conformance.to_json() if self.conformance is not None else None,
            "profiles": self.profiles.to_json() if self.profiles is not None else None,
            "startup": self.startup.to_json() if self.startup is not None else None,
            "gate": self.gate.to_json() if self.gate is not None else None,
            "server_conformance": self.server_conformance.to_json() if self.server_conformance is not None else None,
            "deflate_conformance": (self.deflate_conformance.to_json() if self.deflate_conformance is not None
                                    else None),
            "counts": self.counts.to_json() if self.counts is not None else None,
            "footprint": self.footprint.to_json() if self.footprint is not None else None,
        }
