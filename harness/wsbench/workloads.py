"""Workloads and suites, declared in ``workloads/*.toml``.

A file may hold any number of ``[workload.NAME]`` and ``[suite.NAME]`` tables; names are
unique across all files. A workload has a ``kind`` (see clients/README.md) whose
parameters become the client's command-line options, a ranking ``metric``, and what it
needs of a server or client (``server_features``, ``client_features``).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Container

from . import tomlfile
from .errors import WsbenchError
from .metrics import DEFAULT_METRIC, METRICS
from .paths import WORKLOADS_DIR, relative

DEFAULT_SUITE = "quick"  # wsbench run that names neither a suite nor a workload
DEFAULT_REPETITIONS = 3  # per cell, without a suite
DEFAULT_MIN_SECONDS = 1.0  # the floor on measured phases, unless the suite or --min-seconds sets one
# The TLS axis of a run (wsbench run --tls, a suite's `tls`): every server over ws:// only,
# over wss:// only, or both, each server beside its TLS twin in the same interleaved run.
TLS_MODES = ("off", "on", "both")

MODES = ("burst", "window", "pingpong")
TYPES = ("text", "binary")
TEXTS = ("ascii", "mixed")
EXPECTS = ("text", "close")

Check = Callable[[str, Any, str], Any]


def _choice(options: tuple[str, ...]) -> Check:
    def check(where: str, value: Any, what: str) -> Any:
        tomlfile.expect(where, value, str, what)
        if value not in options:
            raise WsbenchError(f"{where}: {what} must be one of {', '.join(options)}, got '{value}'")
        return value
    return check


def _int(minimum: int) -> Check:
    bound = {0: "non-negative", 1: "positive"}.get(minimum, f"at least {minimum}")

    def check(where: str, value: Any, what: str) -> Any:
        tomlfile.expect(where, value, int, what)
        if value < minimum:
            raise WsbenchError(f"{where}: {what} must be {bound}, got {value}")
        return value
    return check


def _flag(where: str, value: Any, what: str) -> Any:
    return tomlfile.expect(where, value, bool, what)


def _connections(where: str, value: Any, what: str) -> Any:
    """A number of connections, or "max": as many as the machine allows."""
    if value == "max":
        return value
    return _int(1)(where, value, what)


# Client parameters of each kind: name -> (required, check). Order is the order on the
# command line.
KINDS: dict[str, dict[str, tuple[bool, Check]]] = {
    "echo": {"type": (True, _choice(TYPES)), "size": (True, _int(0)), "count": (True, _int(1)),
             "warmup": (False, _int(0)), "mode": (False, _choice(MODES)), "window": (False, _int(1)),
             "text": (False, _choice(TEXTS)), "connections": (False, _int(1)),
             "transfer": (False, _flag)},
    "latency": {"type": (True, _choice(TYPES)), "size": (True, _int(0)), "count": (True, _int(1)),
                "warmup": (False, _int(0))},
    "openloop": {"type": (True, _choice(TYPES)), "size": (True, _int(0)), "rate": (True, _int(1)),
                 "duration_ms": (True, _int(1)), "warmup": (False, _int(0))},
    "buffered": {"size": (True, _int(1)), "count": (True, _int(1)), "polls": (True, _int(1))},
    "request": {"count": (True, _int(1)), "expect": (True, _choice(EXPECTS)),
                "expect_length": (True, _int(0))},
    "handshake": {"count": (True, _int(1)), "tls_resume": (False, _flag)},
    # capacity (clients/README.md): N connections opened C at a time and held H ms, pinged
    # every P ms (loadgen; the JS WebSocket API sends no pings), from K source addresses
    "idle": {"connections": (True, _connections), "concurrency": (False, _int(1)),
             "hold_ms": (True, _int(1)), "ping_ms": (False, _int(1)), "sources": (False, _int(1))},
    # N subscribers of /broadcast, one of them publishing `count` messages of `size` bytes
    # at `rate` per second, each carrying its send time
    "fanout": {"connections": (True, _int(2)), "rate": (True, _int(1)), "count": (True, _int(1)),
               "size": (False, _int(16)), "sources": (False, _int(1))},
}

# Kinds whose measured phase repeats its rounds until --min-seconds has passed, and kinds
# whose echoes the client checks (sequence numbers and bytes, clients/README.md).
FLOOR_KINDS = ("echo", "buffered", "request", "handshake")
VERIFY_KINDS = ("echo", "latency", "openloop", "buffered")
# Kinds that hold many connections: their samples record the descriptor limits of both
# sides and the server's memory before the client started (measure.py).
HOLDING_KINDS = ("idle", "fanout")

WORKLOAD_KEYS = {"description", "kind", "metric", "timeout_s", "path", "server_features",
                 "client_features", "scope", "sweep", "tls_only", "fresh_server", "ramp"}

# Scopes narrow a workload's matrix in scoped suites (see Suite.scoped):
# "clients": every client against the reference server (compares clients);
# "servers": the reference client against every server (compares servers);
# "both": the union of the two. Without a scope, every pair runs.
SCOPES = ("clients", "servers", "both")


@dataclass(frozen=True)
class Ramp:
    """Run a fan-out workload with more and more subscribers; the result is the largest
    number whose p95 delivery latency stayed within ``p95_ms``."""

    connections: tuple[int, ...]
    p95_ms: float


@dataclass(frozen=True)
class Sweep:
    """Run an open-loop workload at rising rates; the result is the highest rate whose
    p99 latency stayed within ``p99_us``."""

    rates: tuple[int, ...]
    p99_us: float


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    kind: str
    params: dict[str, Any]
    metric: str
    timeout_s: float
    source: str
    path: str = "/"
    server_features: tuple[str, ...] = ()
    client_features: tuple[str, ...] = ()
    scope: str | None = None  # see SCOPES
    sweep: Sweep | None = None
    tls_only: bool = False  # means something over wss:// only (TLS session resumption): n/a over ws://
    fresh_server: bool = False  # every sample gets a server of its own, started for it (memory per connection)
    ramp: Ramp | None = None

    def client_args(self, override: dict[str, Any] | None = None, min_seconds: float = 0.0,
                    verify: bool = True) -> list[str]:
        """The client's options: the workload's parameters (``override`` replaces some),
        the floor on its measured phase where the kind has one, and ``--verify off``."""
        args = ["--kind", self.kind]
        for key, value in {**self.params, **(override or {})}.items():
            option = "--" + key.replace("_", "-")
            if value is True:
                args.append(option)
            elif value is not False:
                args += [option, str(value)]
        if self.has_floor():
            args += ["--min-ms", str(int(round(min_seconds * 1000)))]
        if not verify and self.verifies():
            args += ["--verify", "off"]
        return args + ["--timeout-ms", str(int(self.timeout_for(min_seconds) * 1000))]

    def timeout_for(self, min_seconds: float) -> float:
        """The whole run's time limit: the workload's own, plus the floor where it applies."""
        return self.timeout_s + (min_seconds if self.has_floor() else 0.0)

    def has_floor(self) -> bool:
        """Whether the measured phase repeats until the run's minimum duration (latency,
        open-loop and the single close of ``expect = "close"`` keep their own length)."""
        return self.kind in FLOOR_KINDS and self.params.get("expect") != "close"

    def verifies(self) -> bool:
        """Whether the client checks echoes of messages it sent (clients/README.md)."""
        return self.kind in VERIFY_KINDS

    def to_json(self) -> dict[str, Any]:
        return {"description": self.description, "kind": self.kind, "params": self.params,
                "metric": self.metric, "path": self.path, "timeout_s": self.timeout_s,
                "server_features": list(self.server_features),
                "client_features": list(self.client_features),
                "scope": self.scope,
                "sweep": {"rates": list(self.sweep.rates), "p99_us": self.sweep.p99_us} if self.sweep else None,
                "tls_only": self.tls_only, "fresh_server": self.fresh_server,
                "ramp": {"connections": list(self.ramp.connections), "p95_ms": self.ramp.p95_ms} if self.ramp else None,
                "source": self.source}


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    workloads: tuple[str, ...]
    repetitions: int
    source: str
    scoped: bool = True  # honour each workload's scope
    extends: tuple[str, ...] = field(default=())
    servers: tuple[str, ...] | None = None  # the suite's own choice of programs, used when
    clients: tuple[str, ...] | None = None  # the command line names none
    min_seconds: float | None = None  # the suite's floor on measured phases (None: the default)
    tls: str | None = None  # the suite's TLS axis (TLS_MODES; None: off unless --tls says otherwise)
    # clients the suite adds to its matrix, each against the reference server only (when the
    # command line names no client): a slow client gets its rows without a cell per server
    reference_clients: tuple[str, ...] = ()

    def programs(self, kind: str, known: Container[str]) -> list[str] | None:
        """The servers or clients (``kind``) the suite names for itself, each checked
        against the catalog's ``known`` names; None when it names none."""
        names = self.servers if kind == "servers" else self.clients
        if names is None:
            return None
        for name in names:
            if name not in known:
                raise WsbenchError(f"{self.source}: suite '{self.name}' names unknown {kind[:-1]} '{name}'")
        return list(names)


def suite_defaults(suite: Suite | None, repetitions: int | None, min_seconds: float | None) -> tuple[int, float]:
    """The repetitions and the floor of a run: what the command line gives, else the
    suite's, else the defaults; each checked."""
    reps = repetitions or (suite.repetitions if suite else DEFAULT_REPETITIONS)
    if reps < 1:
        raise WsbenchError(f"--repetitions must be at least 1, got {reps}")
    if min_seconds is None:
        min_seconds = suite.min_seconds if suite and suite.min_seconds is not None else DEFAULT_MIN_SECONDS
    if not 0 <= min_seconds <= 600:
        raise WsbenchError(f"--min-seconds must be between 0 and 600, got {min_seconds:g}")
    return reps, min_seconds


@dataclass(frozen=True)
class WorkloadSet:
    workloads: dict[str, Workload]
    suites: dict[str, Suite]

    def select(self, suite: str | None, names: list[str] | None) -> tuple[Suite | None, list[Workload]]:
        for name in names or []:
            if name not in self.workloads:
                raise WsbenchError(f"unknown workload '{name}' (known: {', '.join(self.workloads)})")
        chosen_suite = None
        if suite is not None:
            if suite not in self.suites:
                raise WsbenchError(f"unknown suite '{suite}' (known: {', '.join(self.suites)})")
            chosen_suite = self.suites[suite]
            pool = list(chosen_suite.workloads)
        else:
            pool = list(names or self.workloads)
        chosen = [self.workloads[n] for n in pool if not names or n in names]
        if not chosen:
            raise WsbenchError(f"no workload left after filtering suite '{suite}' by {', '.join(names or [])}")
        return chosen_suite, chosen


def load_workloads(directory: Path = WORKLOADS_DIR) -> WorkloadSet:
    workloads: dict[str, Workload] = {}
    suites: dict[str, Suite] = {}
    files = sorted(directory.glob("*.toml"))
    if not files:
        raise WsbenchError(f"{relative(directory)}: no workload files (*.toml)")
    for path in files:
        data = tomlfile.load(path)
        where = relative(path)
        tomlfile.check_keys(where, data, set(), {"workload", "suite"})
        for name, table in data.get("workload", {}).items():
            if name in workloads:
                raise WsbenchError(f"{where}: workload '{name}' is also defined in {workloads[name].source}")
            workloads[name] = _workload(f"{where}: workload '{name}'", name, table, where)
        for name, table in data.get("suite", {}).items():
            if name in suites:
                raise WsbenchError(f"{where}: suite '{name}' is also defined in {suites[name].source}")
            suites[name] = _suite(f"{where}: suite '{name}'", name, table, where)
    return WorkloadSet(workloads, _resolve_suites(suites, workloads))


def _workload(where: str, name: str, table: Any, source: str) -> Workload:
    tomlfile.expect(where, table, dict, "the entry")
    kind = tomlfile.expect(where, table.get("kind", "echo"), str, "kind")
    if kind not in KINDS:
        raise WsbenchError(f"{where}: kind must be one of {', '.join(KINDS)}, got '{kind}'")
    spec = KINDS[kind]
    required = {"description"} | {k for k, (req, _) in spec.items() if req}
    tomlfile.check_keys(where, table, required, (WORKLOAD_KEYS | set(spec)) - required)
    params = {key: check(where, table[key], key) for key, (_, check) in spec.items() if key in table}
    if kind == "echo":
        _echo_defaults(where, params)
    metric = tomlfile.expect(where, table.get("metric", DEFAULT_METRIC[kind]), str, "metric")
    if metric not in METRICS:
        raise WsbenchError(f"{where}: metric must be one of {', '.join(METRICS)}, got '{metric}'")
    timeout = tomlfile.expect(where, table.get("timeout_s", 60), (int, float), "timeout_s")
    if timeout <= 0:
        raise WsbenchError(f"{where}: timeout_s must be positive")
    path = tomlfile.expect(where, table.get("path", "/"), str, "path")
    if not path.startswith("/"):
        raise WsbenchError(f"{where}: path must start with '/', got '{path}'")
    sweep = _sweep(where, table["sweep"], kind) if "sweep" in table else None
    ramp = _ramp(where, table["ramp"], kind) if "ramp" in table else None
    if ramp and sweep:
        raise WsbenchError(f"{where}: a workload either sweeps its rate or ramps its connections")
    return Workload(
        name=name, description=tomlfile.expect(where, table["description"], str, "description"),
        kind=kind, params=params, metric="max_rate" if sweep else "max_connections" if ramp else metric,
        timeout_s=float(timeout), ramp=ramp,
        fresh_server=tomlfile.expect(where, table.get("fresh_server", False), bool, "fresh_server"),
        source=source, path=path, tls_only=tomlfile.expect(where, table.get("tls_only", False), bool, "tls_only"),
        server_features=tuple(tomlfile.strings(where, table.get("server_features", []), "server_features")),
        client_features=tuple(tomlfile.strings(where, table.get("client_features", []), "client_features")),
        scope=_choice(SCOPES)(where, table["scope"], "scope") if "scope" in table else None,
        sweep=sweep)


def _echo_defaults(where: str, params: dict[str, Any]) -> None:
    mode = params.setdefault("mode", "burst")
    params.setdefault("warmup", min(params["count"], 1000))
    if mode == "window" and "window" not in params:
        raise WsbenchError(f"{where}: mode 'window' needs window")
    if mode != "window":
        params.pop("window", None)


def _steps(where: str, table: Any, key: str, steps_key: str, limit_key: str,
           least: int) -> tuple[tuple[int, ...], float]:
    """A workload's sweep or ramp table: a rising list of steps (each at least ``least``)
    and the limit that ends the climb."""
    where = f"{where}: {key}"
    tomlfile.expect(where, table, dict, key)
    tomlfile.check_keys(where, table, {steps_key, limit_key}, set())
    steps = tomlfile.expect(where, table[steps_key], list, steps_key)
    for n in steps:
        _int(least)(where, n, f"every one of {steps_key}")
    if not steps or steps != sorted(set(steps)):
        raise WsbenchError(f"{where}: {steps_key} must be a non-empty rising list")
    limit = tomlfile.expect(where, table[limit_key], (int, float), limit_key)
    return tuple(steps), float(limit)


def _ramp(where: str, table: Any, kind: str) -> Ramp:
    if kind != "fanout":
        raise WsbenchError(f"{where}: ramp: only a fanout workload can ramp its connections")
    return Ramp(*_steps(where, table, "ramp", "connections", "p95_ms", 2))


def _sweep(where: str, table: Any, kind: str) -> Sweep:
    if kind != "openloop":
        raise WsbenchError(f"{where}: sweep: only an openloop workload can sweep its rate")
    return Sweep(*_steps(where, table, "sweep", "rates", "p99_us", 1))


def _suite(where: str, name: str, table: Any, source: str) -> Suite:
    tomlfile.expect(where, table, dict, "the entry")
    tomlfile.check_keys(where, table, {"description"},
                        {"workloads", "repetitions", "scoped", "extends", "servers", "clients", "min_seconds",
                         "tls", "reference_clients"})
    names = tomlfile.strings(where, table.get("workloads", []), "workloads")
    reps = _int(1)(where, table.get("repetitions", 3), "repetitions")
    min_seconds = None
    if "min_seconds" in table:
        min_seconds = float(tomlfile.expect(where, table["min_seconds"], (int, float), "min_seconds"))
        if min_seconds < 0:
            raise WsbenchError(f"{where}: min_seconds must not be negative, got {min_seconds:g}")
    return Suite(name, tomlfile.expect(where, table["description"], str, "description"),
                 tuple(names), reps, source,
                 scoped=tomlfile.expect(where, table.get("scoped", True), bool, "scoped"),
                 extends=tuple(tomlfile.strings(where, table.get("extends", []), "extends")),
                 servers=tuple(tomlfile.strings(where, table["servers"], "servers")) if "servers" in table else None,
                 clients=tuple(tomlfile.strings(where, table["clients"], "clients")) if "clients" in table else None,
                 min_seconds=min_seconds,
                 tls=_choice(TLS_MODES)(where, table["tls"], "tls") if "tls" in table else None,
                 reference_clients=tuple(tomlfile.strings(where, table.get("reference_clients", []),
                                                          "reference_clients")))


def _resolve_suites(suites: dict[str, Suite], workloads: dict[str, Workload]) -> dict[str, Suite]:
    """Expand ``extends`` (a suite includes the workloads of the suites it extends)."""
    resolved: dict[str, Suite] = {}

    def resolve(name: str, trail: tuple[str, ...]) -> Suite:
        if name in resolved:
            return resolved[name]
        suite = suites[name]
        names: list[str] = []
        for parent in suite.extends:
            if parent not in suites:
                raise WsbenchError(f"{suite.source}: suite '{name}' extends unknown suite '{parent}'")
            if parent in trail:
                raise WsbenchError(f"{suite.source}: suite '{name}' extends itself through '{parent}'")
            names += [n for n in resolve(parent, trail + (parent,)).workloads if n not in names]
        names += [n for n in suite.workloads if n not in names]
        for n in names:
            if n not in workloads:
                raise WsbenchError(f"{suite.source}: suite '{name}' names unknown workload '{n}'")
        resolved[name] = replace(suite, workloads=tuple(names))
        return resolved[name]

    for name in suites:
        resolve(name, (name,))
    return resolved
