"""The result data model and its JSON form (one file per run under reports/): a ``Run``
of ``Cell``s of ``Sample``s, its programs (``ProgramRecord``) and ``Settings``; its side
sections (conformance, profiles, startup, gate) are the typed records of records.py.
Every file of a readable version loads through ``read_json``; nothing here runs a process.

Schema history:
- version 1: first release.
- version 2: the run's ``settings`` (min_seconds, verify, pinning); per sample
  ``reading_errors`` (readings left empty, and why) and ``barrier_s``; clients report
  ``rounds``, ``checked`` and ``compared`` in ``extra``; servers' ``cpus`` when pinned; the
  environment's provenance (lockfile and binary hashes, CPU governor, git state, load
  before and after). Version 1 files are still read (the new fields are empty).
- version 3: ``conformance`` (``wsbench conformance``; absent or null in other runs):
  ``cases`` (each with ``id``, ``section`` of RFC 6455, ``group``, ``title``, ``expect``
  — fail, deliver or reject —, ``strict``: what a strict client does, ``why``) and
  ``verdicts``: per client, per case id, ``verdict`` (strict, non-strict or fail) and a
  one-line ``detail``. Such a run has no servers, workloads or cells; ``settings`` holds
  ``jobs``. Versions 1 and 2 are still read (no conformance section).
- version 4: ``profiles`` (``wsbench profile``; absent or null in other runs): ``dir``
  (the run's ``profiles/<time>/``) and ``cells``, per profiled cell its ``workload``,
  ``server``, ``client``, ``sides``, ``dir``, ``files`` (SVGs, perf data, folded stacks,
  .cpuprofile, breakdown.md), ``breakdown`` per side (``samples``, ``shares`` per category
  in percent — summing to 100 —, ``top`` self frames), the ``unprofiled`` and ``profiled``
  passes' rates, ``overhead`` (the drop from one to the other), ``notes`` and ``error``;
  ``startup`` (``wsbench startup``, or ``wsbench profile --startup``; null elsewhere):
  ``what`` was timed, ``tool`` (hyperfine's version), ``warmup``, ``runs``, and per
  ``clients`` / ``servers`` name hyperfine's ``mean_s``, ``stddev_s``, ``median_s``,
  ``min_s``, ``max_s``, ``runs``, the ``peak_rss_kib`` of one more run, the ``command``
  and ``error``. A profiled run has ``settings.profiled`` true and no cells: it is never
  ranked. Versions 1 to 3 are still read (neither section).
- version 5: ``gate`` (``wsbench gate``; absent or null in other runs): ``role``
  (``baseline`` for ``baselines/gate.json``, ``report`` for ``reports/gate-*.json``);
  a baseline holds ``deterministic`` (the ``machine`` it was counted on — CPU model and
  flags, compiler, libc, valgrind —, ``rise`` and ``fall`` thresholds, and ``counts``
  per profile, full and quick, per cell ``instructions``, ``messages`` and
  ``per_message``) and ``wall`` (the reference client, the clients, server, workloads
  and repetitions of the wall-clock gate, its ``thresholds`` — alpha and minimum effects
  — with their ``calibration``; the run's cells are that measurement's repetitions); a
  report holds the ``outcomes`` of each gate (findings: cell, metric, baseline, value,
  change, verdict) and the ``exit_code``. Versions 1 to 4 are still read.
- version 6: servers' ``target`` (the URL of a server wsbench did not start, ``wsbench run
  --target``; null otherwise) and ``readings`` (where its CPU time and peak RSS were read:
  its own process, a process named with ``--target-pid``, or "n/a (external)", when the
  server CPU and RSS of every sample are null); the environment's ``docker`` section in
  runs of ``make bench-docker``: ``images`` (per service its image tag and ID), ``cpusets``
  (per side the CPUs its containers may use), ``cpu_limits`` (per container its cpuset,
  NanoCpus and CpuQuota), ``engine`` (the Docker engine's version, storage driver and
  cgroup version), ``server_runtimes`` (per server its runtime and that runtime's version
  as printed inside its container; absent in the first runs of version 6) and ``readings``
  (how the servers' CPU and RSS were read); ``settings.shard``
  ([I, N] of ``wsbench run --shard I/N``, else null); a run of ``wsbench merge`` has
  ``settings.merged_shards`` (N) and ``environment.shards`` (per shard its file, times, load
  and commit). Versions 1 to 5 are still read (no target, no readings, no shard).
- version 7: the TLS track (``wsbench run --tls on|both``). ``settings.tls``: null, or the
  axis (``mode``: on or both) and the certificate the servers present (``certificate``, its
  ``key_type``, ``names`` and ``file``, and the ``ca`` every client trusts); a server in TLS
  mode is the twin ``NAME/wss`` of the catalog's server, and its record's ``tls`` holds that
  certificate (null for every other server and for clients). Per sample, ``extra.tls`` is
  what the client tells of its first wss:// connection (``version``, ``cipher``, ``group``,
  ``library``, each null where it cannot tell, and ``cannot_tell`` with the reason), and
  ``extra.server_tls`` what the server printed for the sample's connections
  (servers/README.md, WSBENCH-TLS: ``connections``, ``resumed``, ``version``, ``cipher``,
  ``group``, ``library``; absent where the server prints nothing). Workloads carry
  ``tls_only`` (true: measured over wss:// only, e.g. session resumption). A conformance run
  (``wsbench conformance --tls``) has the same shape: ``settings.tls`` (mode "on", the
  peer's certificate, and ``failure_certificates``: per failure-set entry its file), and its
  ``conformance`` section may hold cases of group ``tls-failure`` whose ``expect`` is
  ``refuse`` (a certificate to refuse) or ``fault`` (a TLS session ended mid-message), and
  verdicts ``n/a`` (the client cannot speak TLS; the detail says why). Plain conformance
  runs record ``settings.tls`` null. Versions 1 to 6 are still read (no TLS).
- version 8: histograms that merge, and runs on a cluster (docs/scaling.md). Per sample of a
  latency or open-loop workload, ``extra.latency_hist``: the client's latency histogram,
  sparse (``unit_ns``, ``sub_bits``, ``integer_values``: how a bucket index maps to values;
  ``count``; ``min``, ``max`` and ``sum``, exact, in units; ``buckets``: ``[index, count]`` of
  every non-empty bucket; clients/README.md, "Latency histograms"). A merged run (``wsbench
  merge``, ``wsbench run --cluster``) adds histograms per repetition: its ``latency_us`` are
  the percentiles of the sum, and ``extra.shards_latency_us`` lists each shard's
  ``latency_us``; ``environment.shards`` entries gain ``worker`` (the shard's ``address``,
  ``host`` and ``name``, null for files of ``--shard``). A cluster run (``wsbench run
  --cluster``) also has ``settings.cluster``: ``engine`` (name and version), ``address`` (as
  given), ``scheduler``, ``local`` (a ``local:N`` cluster), ``ready_timeout_s``,
  ``load_workers`` (per shard its ``shard`` number, ``address``, ``host``, ``name`` and
  ``clock``: ``offset_s`` against the coordinator's wall clock and its ``uncertainty_s``),
  ``server_worker`` (the same, or null), ``server_pids`` (the server's processes on its
  host) and ``failure`` (why the run stopped, or null); its ``environment.shards`` entries
  add ``clock``, ``cpu_model``, ``logical_cpus``, ``kernel`` and ``runtimes`` of each load
  host; per merged sample ``extra.start_skew_s`` (the largest difference between two shards'
  ``GO``, each by its host's wall clock) and ``extra.barrier`` (``go_after_first_s`` and
  ``go_after_release_s`` per shard, ``phases_overlap``: the fraction of the union of the
  shards' measured phases that all of them cover), and the server's CPU time and peak RSS
  as read on its host over the union of the phases (``servers.NAME.readings`` says how).
  Versions 1 to 7 are still read (no histograms: their latency workloads do not merge).

  Also in version 8, capacity (the `idle` and `fanout` kinds): workloads carry
  ``fresh_server`` (every sample on a server started for it) and ``ramp`` (null, or the
  ``connections`` tried and the ``p95_ms`` bound); the environment's ``limits`` (the
  harness's RLIMIT_NOFILE, which its children get with soft = hard, and the sysctls
  ip_local_port_range, somaxconn, tcp_mem, fs.nr_open, fs.file-max); per sample of those
  kinds ``extra.limits`` (each side's RLIMIT_NOFILE, [soft, hard]),
  ``extra.server_rss_before_kib``, ``extra.marks`` (per WSBENCH-MARK of the client: ``t_s``
  since GO, both sides' CPU since GO and resident memory then), ``extra.stopped`` (the
  one-line reason a limit stopped the client, with the count it held), and for a ramp
  ``max_connections``, ``ramp_stopped`` and its ``steps``.
- version 9: what a program must report of itself and what it reported (issue 25). Every
  server and client record has ``expect`` (null, or the catalog's dotted keys and values,
  e.g. ``{"ws.bufferutil": true}``: a sample whose result line, or a server whose
  ``WSBENCH-INFO`` line, says otherwise failed), ``info`` (servers: the object of their
  ``WSBENCH-INFO`` line, e.g. ``{"ws": {"bufferutil": true, "mask": "bufferutil", "addon":
  ..., "version": ..., "utf8": ...}}``; null where the server printed none, for clients and
  targets) and ``barrier`` (clients: how they took the start barrier and the end hold,
  ``"stdin"`` or ``"http"``; null for servers). A node-ws client's samples carry the same
  ``ws`` object in ``extra``. In runs of ``make bench-docker`` the environment's
  ``docker.server_runtimes.<name>`` also holds ``info``. Versions 1 to 8 are still read
  (the three keys null).

The side sections are read and written through their records (records.py), key for key as
above; tests/test_schemas.py loads a file of every version (tests/fixtures/schemas/).
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from .errors import WsbenchError
from .metrics import METRICS
from .records import Conformance, Gate, Profiles, Startup, gate_from_json
from .stats import Summary, summarize

if TYPE_CHECKING:
    from .pinning import Pinning

SCHEMA = "wsbench-run"
SCHEMA_VERSION = 9
T = TypeVar("T")
READABLE_VERSIONS = (1, 2, 3, 4, 5, 6, 7, 8, 9)


@dataclass(frozen=True)
class Settings:
    """How every cell of a run is measured (recorded with the run)."""

    min_seconds: float = 1.0  # floor on the measured phase of the kinds that have one
    verify: str = "on"  # "off": clients check no echo; "both": every client also runs unchecked
    # (as "<name>/unchecked"), to measure what the checks cost
    pinning: Pinning | None = None  # client and server on separate cores
    tls: dict[str, Any] | None = None  # the TLS axis and the servers' certificate (schema 7)

    def to_json(self) -> dict[str, Any]:
        return {"min_seconds": self.min_seconds, "verify": self.verify,
                "pinning": self.pinning.to_json() if self.pinning else None, "tls": self.tls}


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

    def to_json(self) -> dict[str, Any]:
        return dict(self.__dict__)


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
        }


def write_json(run: Run, path: Path, summaries: bool = True) -> None:
    """Write atomically, so an interrupted run never leaves a half-written file."""
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(run.to_json(summaries), indent=1) + "\n")
    os.replace(tmp, path)


def read_json(path: Path) -> Run:
    """Load a run file written by ``write_json`` (for re-rendering and comparison)."""
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise WsbenchError(f"{path}: file not found") from None
    except json.JSONDecodeError as exc:
        raise WsbenchError(f"{path}: not JSON: {exc}") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA:
        raise WsbenchError(f"{path}: not a wsbench run file")
    if data.get("schema_version") not in READABLE_VERSIONS:
        raise WsbenchError(f"{path}: schema version {data.get('schema_version')} is not supported "
                           f"(this wsbench reads {', '.join(map(str, READABLE_VERSIONS))})")
    try:
        return _run_from_json(data)
    except (KeyError, TypeError, ValueError, AttributeError) as exc:
        raise WsbenchError(f"{path}: malformed run file ({exc})") from None


def _run_from_json(data: dict[str, Any]) -> Run:
    def program(d: dict[str, Any]) -> ProgramRecord:
        return ProgramRecord(**d)

    cells = []
    for c in data["cells"]:
        cell = Cell(c["workload"], c["server"], c["client"], blocked=c.get("blocked"), na=c.get("na"))
        cell.samples = [Sample(**s) for s in c["samples"]]
        cells.append(cell)
    return Run(
        created=data["created"], command=data["command"], suite=data["suite"],
        repetitions=data["repetitions"], environment=data["environment"],
        workloads=data["workloads"],
        servers={k: program(v) for k, v in data["servers"].items()},
        clients={k: program(v) for k, v in data["clients"].items()},
        cells=cells, finished=data.get("finished"), complete=data.get("complete", False),
        settings=data.get("settings", {}), conformance=_section(data, "conformance", Conformance.from_json),
        profiles=_section(data, "profiles", Profiles.from_json), startup=_section(data, "startup", Startup.from_json),
        gate=_section(data, "gate", gate_from_json))


def _section(data: dict[str, Any], name: str, read: Callable[[dict[str, Any]], T]) -> T | None:
    """A side section (absent or null: None; in versions before it existed, always)."""
    value = data.get(name)
    if value is None:
        return None
    if not isinstance(value, dict):
        raise TypeError(f"{name} is not an object")
    return read(value)
