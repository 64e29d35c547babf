"""Workloads and suites, declared in ``workloads/*.toml``.

A file may hold any number of ``[workload.NAME]`` and ``[suite.NAME]`` tables; names are
unique across all files. A workload has a ``kind`` (see clients/README.md) whose
parameters become the client's command-line options, a ranking ``metric``, and what it
needs of a server or client (``server_features``, ``client_features``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Container

from . import tomlfile
from .tomlfile import Key, key
from .errors import WsbenchError
from .metrics import DEFAULT_METRIC, METRICS
from .paths import WORKLOADS_DIR, relative

DEFAULT_SUITE = "quick"  # wsbench run that names neither a suite nor a workload
DEFAULT_REPETITIONS = 3  # per cell, without a suite
DEFAULT_MIN_SECONDS = 1.0  # the floor on measured phases, unless the suite or --min-seconds sets one
# The axes of a run with twins (wsbench run --tls and --deflate, a suite's `tls` and
# `deflate`): every server as it is only, as its twin only (over wss://, with
# permessage-deflate), or both, each server beside its twin in the same interleaved run.
AXIS_MODES = ("off", "on", "both")

MODES = ("burst", "window", "pingpong")
TYPES = ("text", "binary")
# The message contents (clients/README.md, "Message contents"): text `ascii` (cyclic, the
# default), `mixed` (UTF-8 of 1 to 4 bytes a character) or `json` (the corpus: a trade
# feed's records), binary `counting` (bytes i & 255, the default) or `random` (the corpus:
# incompressible); the corpus gives permessage-deflate real contents to compress.
TEXTS = ("ascii", "mixed", "json")
BYTES = ("counting", "random")
EXPECTS = ("text", "close")

def _connections(where: str, value: Any, what: str) -> Any:
    """A number of connections, or "max": as many as the machine allows."""
    if value == "max":
        return value
    return tomlfile.value(where, value, int, what, Key(minimum=1))


def _param(kind: Any, required: bool = False, **spec: Any) -> Key:
    return Key(type=kind, required=required, **spec)


TYPE, SIZE = _param(str, True, choices=TYPES), _param(int, True, minimum=0)
WARMUP = _param(int, minimum=0)
TEXT, BYTES_PARAM = _param(str, choices=TEXTS), _param(str, choices=BYTES)
# Client parameters of each kind, read beside the workload's own keys; the order is the
# order on the command line.
KINDS: dict[str, dict[str, Key]] = {
    "echo": {"type": TYPE, "size": SIZE, "count": _param(int, True, minimum=1), "warmup": WARMUP,
             "mode": _param(str, choices=MODES), "window": _param(int, minimum=1), "text": TEXT,
             "bytes": BYTES_PARAM, "connections": _param(int, minimum=1), "transfer": _param(bool)},
    "latency": {"type": TYPE, "size": SIZE, "count": _param(int, True, minimum=1), "warmup": WARMUP,
                "text": TEXT, "bytes": BYTES_PARAM},
    "openloop": {"type": TYPE, "size": SIZE, "rate": _param(int, True, minimum=1),
                 "duration_ms": _param(int, True, minimum=1), "warmup": WARMUP, "text": TEXT, "bytes": BYTES_PARAM},
    "buffered": {"size": _param(int, True, minimum=1), "count": _param(int, True, minimum=1),
                 "polls": _param(int, True, minimum=1)},
    "request": {"count": _param(int, True, minimum=1), "expect": _param(str, True, choices=EXPECTS),
                "expect_length": _param(int, True, minimum=0)},
    "handshake": {"count": _param(int, True, minimum=1), "tls_resume": _param(bool)},
    # capacity (clients/README.md): N connections opened C at a time and held H ms, pinged
    # every P ms (loadgen; the JS WebSocket API sends no pings), from K source addresses;
    # warm: each sends one message (1 KiB of the JSON corpus) and takes its echo before the
    # hold, so that the mark reads connections after traffic (zlib's state, with deflate)
    "idle": {"connections": _param(Any, True, check=_connections), "concurrency": _param(int, minimum=1),
             "hold_ms": _param(int, True, minimum=1), "ping_ms": _param(int, minimum=1),
             "sources": _param(int, minimum=1), "warm": _param(bool)},
    # reconnect storms (docs/misbehave.md): N connections opened C at a time, each echoed once,
    # then all closed at once and each reopened as soon as its close completed; a reopening
    # that makes no progress for stall_ms is given up; settle_ms between the marks storm and after
    "storm": {"connections": _param(int, True, minimum=1), "concurrency": _param(int, minimum=1),
              "sources": _param(int, minimum=1), "stall_ms": _param(int, minimum=1),
              "settle_ms": _param(int, minimum=0)},
    # N subscribers of /broadcast, one of them publishing `count` messages of `size` bytes
    # at `rate` per second, each carrying its send time
    # against a server that stops reading (lws-echo's ?stall=MS in the path): send
    # total_bytes of size-byte messages as fast as send() takes them, for at most send_ms
    # ms; settle_ms later the mark "full" (backpressure.py)
    "backpressure": {"type": _param(str, choices=TYPES), "size": _param(int, True, minimum=1),
                     "total_bytes": _param(int, minimum=1), "send_ms": _param(int, minimum=1),
                     "settle_ms": _param(int, minimum=1)},
    "fanout": {"connections": _param(int, True, minimum=2), "rate": _param(int, True, minimum=1),
               "count": _param(int, True, minimum=1), "size": _param(int, minimum=16),
               "sources": _param(int, minimum=1)},
    # slow consumers (docs/misbehave.md): N subscribers of /broadcast, the last `slow` of them
    # stop reading (receive buffer `rcvbuf` bytes), one publishes `rate` messages of `size`
    # bytes per second for `duration_ms`; the slow ones drain for at most `drain_ms` after
    "slow": {"connections": _param(int, True, minimum=2), "slow": _param(int, True, minimum=0),
             "rate": _param(int, True, minimum=1), "duration_ms": _param(int, True, minimum=1),
             "size": _param(int, True, minimum=16), "rcvbuf": _param(int, minimum=1024),
             "drain_ms": _param(int, minimum=0)},
    # soak drift (docs/misbehave.md): `count` connect–echo–close cycles, `connections` at a
    # time, one message of `size` bytes each, `marks` readings over the run (soakfit.py); and
    # `connections` held `hold_ms` with a ping on each every `ping_ms`, a reading every `mark_ms`
    "cycles": {"count": _param(int, True, minimum=1), "connections": _param(int, True, minimum=1),
               "type": _param(str, choices=TYPES), "size": _param(int, minimum=0), "marks": _param(int, minimum=1)},
    "pinghold": {"connections": _param(int, True, minimum=1), "concurrency": _param(int, minimum=1),
                 "hold_ms": _param(int, True, minimum=1), "ping_ms": _param(int, True, minimum=1),
                 "mark_ms": _param(int, True, minimum=1)},
}

# Kinds whose measured phase repeats its rounds until --min-seconds has passed, and kinds
# whose echoes the client checks (sequence numbers and bytes, clients/README.md).
FLOOR_KINDS = ("echo", "buffered", "request", "handshake")
VERIFY_KINDS = ("echo", "latency", "openloop", "buffered", "backpressure")
# Kinds that hold many connections: their samples record the descriptor limits of both
# sides and the server's memory before the client started (measure.py).
HOLDING_KINDS = ("idle", "fanout", "slow")
# Kinds whose marks also read both ends of the connection (tcp_ends.py; measure.py).
SOCKET_MARK_KINDS = ("backpressure",)

# Scopes narrow a workload's matrix in scoped suites (see Suite.scoped):
# "clients": every client against the reference server (compares clients);
# "servers": the reference client against every server (compares servers);
# "both": the union of the two. Without a scope, every pair runs.
SCOPES = ("clients", "servers", "both")


def _rising(where: str, steps: tuple[int, ...], what: str) -> tuple[int, ...]:
    if not steps or list(steps) != sorted(set(steps)):
        raise WsbenchError(f"{where}: {what} must be a non-empty rising list")
    return steps


@dataclass(frozen=True, kw_only=True)
class Ramp:
    """Run a fan-out workload with more and more subscribers; the result is the largest
    number whose p95 delivery latency stayed within ``p95_ms``."""

    connections: tuple[int, ...] = key(minimum=2, check=_rising)
    p95_ms: float = key()


@dataclass(frozen=True, kw_only=True)
class Vanish:
    """Run an idle workload of one connection inside a network namespace of its own and
    make its client vanish at its start barrier (vanish.py): does the server free the
    connection within ``bound_s``, and when."""

    bound_s: float = key(check=lambda where, value, what: _positive(where, value, what))


@dataclass(frozen=True, kw_only=True)
class Sweep:
    """Run an open-loop workload at rising rates; the result is the highest rate whose
    p99 latency stayed within ``p99_us``."""

    rates: tuple[int, ...] = key(minimum=1, check=_rising)
    p99_us: float = key()


def _positive(where: str, value: float, what: str) -> float:
    if value <= 0:
        raise WsbenchError(f"{where}: {what} must be positive")
    return value


def _absolute(where: str, value: str, what: str) -> str:
    if not value.startswith("/"):
        raise WsbenchError(f"{where}: {what} must start with '/', got '{value}'")
    return value


@dataclass(frozen=True, kw_only=True)
class Workload:
    """A ``[workload.NAME]`` table: its own keys, declared below, and its kind's client
    parameters (``KINDS``) in ``params``."""

    name: str
    source: str
    params: dict[str, Any]
    description: str = key()
    kind: str = key("echo", choices=tuple(KINDS))
    metric: str = key("", choices=tuple(METRICS))  # absent from the file: the kind's default (DEFAULT_METRIC)
    timeout_s: float = key(60.0, check=_positive)
    path: str = key("/", check=_absolute)
    sweep: Sweep | None = key(None)
    ramp: Ramp | None = key(None)
    vanish: Vanish | None = key(None)  # the peer vanishes (vanish.py): results in samples' extra.vanish
    tls_only: bool = key(False)  # means something over wss:// only (TLS session resumption): n/a over ws://
    fresh_server: bool = key(False)  # every sample gets a server of its own, started for it (memory per connection)
    # what that server gets on its command line besides the catalog's (e.g. --broadcast-limit
    # N: servers/README.md item 16); recorded in each sample's extra.server_args
    server_args: tuple[str, ...] = key(())
    # stop the sample once the server's (or the client's) RSS passes this many MiB (rsscap.py):
    # its outcome, extra.stopped, not a failure; None: no cap
    server_rss_cap_mib: int | None = key(None, minimum=1)
    # with permessage-deflate on, every client offers it without context takeover both ways
    # (server_no_context_takeover; client_no_context_takeover): the catalog's deflate
    # no_takeover; a client that cannot is n/a (deflate.py)
    no_context_takeover: bool = key(False)
    server_features: tuple[str, ...] = key(())
    client_features: tuple[str, ...] = key(())
    scope: str | None = key(None, choices=SCOPES)  # see SCOPES

    def client_args(self, override: dict[str, Any] | None = None, min_seconds: float = 0.0,
                    verify: bool = True) -> list[str]:
        """The client's options: the workload's parameters (``override`` replaces some),
        the floor on its measured phase where the kind has one, and ``--verify off``."""
        args = ["--kind", self.kind]
        for param, value in {**self.params, **(override or {})}.items():
            option = "--" + param.replace("_", "-")
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
                "no_context_takeover": self.no_context_takeover,
                "ramp": {"connections": list(self.ramp.connections), "p95_ms": self.ramp.p95_ms} if self.ramp else None,
                "source": self.source}


def _not_negative(where: str, value: float, what: str) -> float:
    if value < 0:
        raise WsbenchError(f"{where}: {what} must not be negative, got {value:g}")
    return value


@dataclass(frozen=True, kw_only=True)
class Suite:
    """A ``[suite.NAME]`` table."""

    name: str
    source: str
    description: str = key()
    workloads: tuple[str, ...] = key(())
    repetitions: int = key(3, minimum=1)
    scoped: bool = key(True)  # honour each workload's scope
    extends: tuple[str, ...] = key(())
    servers: tuple[str, ...] | None = key(None)  # the suite's own choice of programs, used when
    clients: tuple[str, ...] | None = key(None)  # the command line names none
    min_seconds: float | None = key(None, check=_not_negative)  # the floor on measured phases (None: the default)
    tls: str | None = key(None, choices=AXIS_MODES)  # the suite's TLS axis (None: off unless --tls says otherwise)
    deflate: str | None = key(None, choices=AXIS_MODES)  # its deflate axis, off|on|both (None: off unless --deflate)
    # clients the suite adds to its matrix, each against the reference server only (when the
    # command line names no client): a slow client gets its rows without a cell per server
    reference_clients: tuple[str, ...] = key(())

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
        for name, table in tomlfile.tables(where, data, "workload").items():
            if name in workloads:
                raise WsbenchError(f"{where}: workload '{name}' is also defined in {workloads[name].source}")
            workloads[name] = _workload(f"{where}: workload '{name}'", name, table, where)
        for name, table in tomlfile.tables(where, data, "suite").items():
            if name in suites:
                raise WsbenchError(f"{where}: suite '{name}' is also defined in {suites[name].source}")
            suites[name] = Suite(name=name, source=where, **tomlfile.read(f"{where}: suite '{name}'", table, Suite))
    return WorkloadSet(workloads, _resolve_suites(suites, workloads))


def _workload(where: str, name: str, table: Any, source: str) -> Workload:
    tomlfile.expect(where, table, dict, "the entry")
    kind = tomlfile.value(where, table.get("kind", "echo"), str, "kind", Key(choices=tuple(KINDS)))
    if "sweep" in table and kind != "openloop":
        raise WsbenchError(f"{where}: sweep: only an openloop workload can sweep its rate")
    if "ramp" in table and kind != "fanout":
        raise WsbenchError(f"{where}: ramp: only a fanout workload can ramp its connections")
    if "vanish" in table:
        _vanishing(where, kind, table)
    values = tomlfile.read(where, table, Workload, extra=KINDS[kind])
    _on_its_own_server(where, values)
    params = {param: values.pop(param) for param in KINDS[kind] if param in values}
    _contents(where, params)
    if kind == "echo":
        _echo_defaults(where, params)
    sweep, ramp = values.get("sweep"), values.get("ramp")
    if ramp and sweep:
        raise WsbenchError(f"{where}: a workload either sweeps its rate or ramps its connections")
    metric = "max_rate" if sweep else "max_connections" if ramp else values.pop("metric", DEFAULT_METRIC[kind])
    return Workload(name=name, source=source, params=params, **{**values, "metric": metric})


def _vanishing(where: str, kind: str, table: dict[str, Any]) -> None:
    """A vanishing peer is an idle client of one connection, without pings, holding longer
    than the watch (its bound) lasts."""
    if kind != "idle":
        raise WsbenchError(f"{where}: vanish: only an idle workload's peer can vanish")
    if table.get("connections") != 1 or "ping_ms" in table or table.get("fresh_server"):
        raise WsbenchError(f"{where}: vanish: needs connections = 1, no ping_ms and no fresh_server "
                           "(its server is started inside the namespace)")
    bound = (table.get("vanish") or {}).get("bound_s")
    if isinstance(bound, (int, float)) and isinstance(table.get("hold_ms"), int) \
            and table["hold_ms"] < bound * 1000 + 5000:
        raise WsbenchError(f"{where}: vanish: hold_ms must be at least bound_s + 5 s "
                           f"({int(bound * 1000 + 5000)} ms): the client holds while the server is watched")


def _on_its_own_server(where: str, values: dict[str, Any]) -> None:
    """Server arguments and an RSS cap (the cap kills the server) need a server started for
    each sample (a vanishing peer's cell starts its own: server arguments go with it)."""
    for name in ("server_args", "server_rss_cap_mib"):
        if name == "server_args" and values.get("vanish"):
            continue
        if values.get(name) and not values.get("fresh_server"):
            raise WsbenchError(f"{where}: {name} needs fresh_server = true (a server started for each sample)")


def _contents(where: str, params: dict[str, Any]) -> None:
    """`text` goes with text messages, `bytes` with binary ones, and neither with --transfer
    (whose buffers are stamped per message) when it is the corpus (clients/README.md)."""
    kind = params.get("type")
    if params.get("text", "ascii") != "ascii" and kind != "text":
        raise WsbenchError(f"{where}: text = '{params['text']}' needs type = 'text'")
    if params.get("bytes", "counting") != "counting" and kind != "binary":
        raise WsbenchError(f"{where}: bytes = '{params['bytes']}' needs type = 'binary'")
    if params.get("bytes") == "random" and params.get("transfer"):
        raise WsbenchError(f"{where}: bytes = 'random' cannot go with transfer (its buffers are stamped per message)")


def _echo_defaults(where: str, params: dict[str, Any]) -> None:
    mode = params.setdefault("mode", "burst")
    params.setdefault("warmup", min(params["count"], 1000))
    if mode == "window" and "window" not in params:
        raise WsbenchError(f"{where}: mode 'window' needs window")
    if mode != "window":
        params.pop("window", None)


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
