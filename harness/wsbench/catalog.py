"""The runtimes, servers and clients wsbench knows, read from ``harness/runtimes.toml``."""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from . import certificates, tomlfile
from .errors import WsbenchError
from .paths import ROOT, RUNTIMES_FILE, relative

BARRIERS = ("stdin", "http")  # hold.py


@dataclass(frozen=True)
class Runtime:
    name: str
    label: str
    version_cmd: tuple[str, ...]


@dataclass(frozen=True)
class TlsSpec:
    """How a program speaks TLS (runtimes.toml's ``tls`` table; placeholders ``{ca}``,
    ``{cert}``, ``{key}``, see certificates.py): ``command`` replaces the program's command line
    where flags must come before its script (Deno's permissions and ``--cert``), ``args``
    are appended, ``env`` is added (``NODE_EXTRA_CA_CERTS``)."""

    command: tuple[str, ...] | None = None
    args: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Program:
    """A server or a client: a command line run from the repository root."""

    name: str
    kind: str  # "server" or "client"
    runtime: str
    label: str
    command: tuple[str, ...]
    env: dict[str, str] = field(default_factory=dict)
    requires: tuple[str, ...] = ()
    ready_timeout_s: float = 20.0  # servers: how long to wait for the readiness line
    features: tuple[str, ...] = ()  # what it can do beyond plain echo (see runtimes.toml)
    kinds: tuple[str, ...] | None = None  # clients: the workload kinds it runs (None: all)
    notes: dict[str, str] = field(default_factory=dict)  # why a kind or feature is missing
    default: bool = True  # part of the matrix unless named explicitly (ablation variants are not)
    echo_checks: bool = True  # clients: check the echoes (False only for the twins of --verify both)
    tls: TlsSpec | None = None  # how it speaks TLS (None: it cannot)
    secure: bool = False  # this instance runs over TLS (a server's "/wss" twin, a client in its cells)
    twin_of: str | None = None  # a twin's catalog name (NAME/wss, NAME/unchecked): scopes treat it as NAME
    barrier: str = "stdin"  # clients: how they take the two barriers (hold.py): "stdin" or "http" (k6)
    expect: dict[str, Any] = field(default_factory=dict)  # what it must report of itself: "ws.bufferutil" = true

    def unmet(self, reported: dict[str, Any] | None, where: str) -> str | None:
        """Why what the program reported of itself (a client's result line, a server's
        WSBENCH-INFO line; ``where`` names it) is not what its catalog entry expects, or None.
        Keys are dotted paths into the reported object."""
        for key, want in self.expect.items():
            value: Any = reported
            for part in key.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if value is None:
                return (f"its {where} does not say {key} (harness/runtimes.toml expects {key} = "
                        f"{_toml(want)})")
            if value != want or type(value) is not type(want):
                return f"its {where} says {key} = {_toml(value)}, harness/runtimes.toml expects {_toml(want)}"
        return None

    def cannot(self, kind: str, features: tuple[str, ...]) -> str | None:
        """Why this program cannot take part in a workload, or None if it can."""
        if self.kinds is not None and kind not in self.kinds:
            return self.notes.get(kind, f"does not run '{kind}' workloads")
        for feature in features:
            if feature not in self.features:
                return self.notes.get(feature, f"lacks '{feature}'")
        return None

    def unchecked_twin(self) -> "Program":
        """The same client with its echo checks off, to measure what they cost."""
        return replace(self, name=f"{self.name}/unchecked", label=f"{self.label} (echoes unchecked)",
                       echo_checks=False, twin_of=self.twin_of or self.name)

    def cannot_tls(self) -> str | None:
        """Why this program cannot take part over wss://, or None if it can."""
        if self.tls is None:
            return self.notes.get("tls", "cannot speak TLS (no tls entry in harness/runtimes.toml)")
        return None

    def over_tls(self, values: dict[str, str]) -> "Program":
        """This program speaking TLS with the certificates ``values`` name (tls.Certs.values):
        a server becomes its twin ``NAME/wss``; a client keeps its name."""
        assert self.tls is not None
        spec = self.tls
        command = certificates.expand(spec.command or self.command, values) + certificates.expand(spec.args, values)
        env = {**self.env, **{k: certificates.expand((v,), values)[0] for k, v in spec.env.items()}}
        if self.kind == "server":
            return replace(self, name=f"{self.name}/wss", label=f"{self.label} over TLS", command=command,
                           env=env, secure=True, twin_of=self.twin_of or self.name)
        return replace(self, command=command, env=env, secure=True)

    @property
    def catalog_name(self) -> str:
        """The name in runtimes.toml (a twin's is its original's)."""
        return self.twin_of or self.name

    def missing(self) -> list[str]:
        """Files this program needs that are not there (not built yet)."""
        return [r for r in self.requires if not (ROOT / r).exists()]


@dataclass(frozen=True)
class Catalog:
    runtimes: dict[str, Runtime]
    servers: dict[str, Program]
    clients: dict[str, Program]
    reference_server: str | None = None  # what scoped workloads compare clients against
    reference_client: str | None = None  # what scoped workloads drive servers with

    def select(self, kind: str, names: list[str] | None, runtimes: list[str] | None) -> list[Program]:
        """Programs of ``kind`` filtered by name and by runtime; unknown names are errors."""
        table = self.servers if kind == "server" else self.clients
        for name in names or []:
            if name not in table:
                raise WsbenchError(f"unknown {kind} '{name}' (known: {', '.join(table)})")
        for rt in runtimes or []:
            if rt not in self.runtimes:
                raise WsbenchError(f"unknown runtime '{rt}' (known: {', '.join(self.runtimes)})")
        chosen = [p for p in table.values()
                  if (p.catalog_name in names if names else p.default) and (not runtimes or p.runtime in runtimes)]
        return chosen


def load_catalog(path: Path = RUNTIMES_FILE) -> Catalog:
    data = tomlfile.load(path)
    where = relative(path)
    tomlfile.check_keys(where, data, {"runtimes", "servers", "clients"}, {"reference"})
    runtimes = {name: _runtime(f"{where}: runtime '{name}'", name, table)
                for name, table in data["runtimes"].items()}
    servers = {name: _program(f"{where}: server '{name}'", name, "server", table, runtimes)
               for name, table in data["servers"].items()}
    clients = {name: _program(f"{where}: client '{name}'", name, "client", table, runtimes)
               for name, table in data["clients"].items()}
    reference = tomlfile.expect(where, data.get("reference", {}), dict, "reference")
    tomlfile.check_keys(f"{where}: reference", reference, set(), {"server", "client"})
    ref_server, ref_client = reference.get("server"), reference.get("client")
    if ref_server is not None and ref_server not in servers:
        raise WsbenchError(f"{where}: reference server '{ref_server}' is not a server")
    if ref_client is not None and ref_client not in clients:
        raise WsbenchError(f"{where}: reference client '{ref_client}' is not a client")
    return Catalog(runtimes, servers, clients, ref_server, ref_client)


def _runtime(where: str, name: str, table: Any) -> Runtime:
    tomlfile.expect(where, table, dict, "the entry")
    tomlfile.check_keys(where, table, {"label", "version"}, set())
    return Runtime(name, tomlfile.expect(where, table["label"], str, "label"),
                   tuple(tomlfile.strings(where, table["version"], "version", allow_empty=False)))


def _program(where: str, name: str, kind: str, table: Any, runtimes: dict[str, Runtime]) -> Program:
    tomlfile.expect(where, table, dict, "the entry")
    tomlfile.check_keys(where, table, {"runtime", "label", "command"},
                        {"env", "requires", "ready_timeout_s", "features", "kinds", "notes", "default", "tls",
                         "barrier", "expect"})
    runtime = tomlfile.expect(where, table["runtime"], str, "runtime")
    if runtime not in runtimes:
        raise WsbenchError(f"{where}: unknown runtime '{runtime}'")
    env = tomlfile.expect(where, table.get("env", {}), dict, "env")
    ready = tomlfile.expect(where, table.get("ready_timeout_s", 20.0), (int, float), "ready_timeout_s")
    return Program(
        name=name, kind=kind, runtime=runtime,
        label=tomlfile.expect(where, table["label"], str, "label"),
        command=tuple(tomlfile.strings(where, table["command"], "command", allow_empty=False)),
        env={str(k): str(v) for k, v in env.items()},
        requires=tuple(tomlfile.strings(where, table.get("requires", []), "requires")),
        ready_timeout_s=float(ready),
        features=tuple(tomlfile.strings(where, table.get("features", []), "features")),
        kinds=tuple(tomlfile.strings(where, table["kinds"], "kinds", allow_empty=False)) if "kinds" in table else None,
        notes={str(k): tomlfile.expect(where, v, str, f"notes.{k}")
               for k, v in tomlfile.expect(where, table.get("notes", {}), dict, "notes").items()},
        default=tomlfile.expect(where, table.get("default", True), bool, "default"),
        tls=_tls(f"{where}: tls", table["tls"]) if "tls" in table else None,
        barrier=_barrier(where, kind, table.get("barrier", "stdin")),
        expect=_expect(where, table.get("expect", {})),
    )


def _barrier(where: str, kind: str, value: Any) -> str:
    mode = tomlfile.expect(where, value, str, "barrier")
    if mode not in BARRIERS or (kind == "server" and mode != "stdin"):
        raise WsbenchError(f"{where}: barrier must be one of {', '.join(BARRIERS)} (clients only), got '{mode}'")
    return mode


def _expect(where: str, table: Any) -> dict[str, Any]:
    """``expect``: dotted keys of what the program reports of itself, each a bool, string or number."""
    tomlfile.expect(where, table, dict, "expect")
    for key, value in table.items():
        if not isinstance(value, (bool, str, int, float)):
            raise WsbenchError(f"{where}: expect.{key} must be a boolean, string or number")
    return dict(table)


def _toml(value: Any) -> str:
    return "true" if value is True else "false" if value is False else json.dumps(value)


def _tls(where: str, table: Any) -> TlsSpec:
    tomlfile.expect(where, table, dict, "the table")
    tomlfile.check_keys(where, table, set(), {"command", "args", "env"})
    env = tomlfile.expect(where, table.get("env", {}), dict, "env")
    spec = TlsSpec(
        command=tuple(tomlfile.strings(where, table["command"], "command", allow_empty=False))
        if "command" in table else None,
        args=tuple(tomlfile.strings(where, table.get("args", []), "args")),
        env={str(k): tomlfile.expect(where, v, str, f"env.{k}") for k, v in env.items()})
    used = " ".join((*(spec.command or ()), *spec.args, *spec.env.values()))
    if not any(p in used for p in certificates.PLACEHOLDERS):
        raise WsbenchError(f"{where}: names no certificate ({', '.join(certificates.PLACEHOLDERS)}): how would it "
                           "trust the test CA or present the server certificate?")
    return spec
