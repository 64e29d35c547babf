"""The runtimes, servers and clients wsbench knows, read from ``harness/runtimes.toml``."""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from . import certificates, tomlfile
from .errors import WsbenchError
from .paths import ROOT, RUNTIMES_FILE, relative
from .tomlfile import key

BARRIERS = ("stdin", "http")  # hold.py


@dataclass(frozen=True)
class Runtime:
    name: str
    label: str = key()
    version_cmd: tuple[str, ...] = key(name="version", nonempty=True)


@dataclass(frozen=True)
class TlsSpec:
    """How a program speaks TLS (runtimes.toml's ``tls`` table; placeholders ``{ca}``,
    ``{cert}``, ``{key}``, see certificates.py): ``command`` replaces the program's command line
    where flags must come before its script (Deno's permissions and ``--cert``), ``args``
    are appended, ``env`` is added (``NODE_EXTRA_CA_CERTS``)."""

    command: tuple[str, ...] | None = key(None, nonempty=True)
    args: tuple[str, ...] = key(())
    env: dict[str, str] = key(default_factory=dict)


@dataclass(frozen=True)
class OfferSpec:
    """What a client adds to its deflate axis ``args`` and ``env`` to offer permessage-deflate
    without context takeover (``server_no_context_takeover; client_no_context_takeover``),
    for the workloads with ``no_context_takeover = true``; empty where its offer already
    asks for it (k6)."""

    args: tuple[str, ...] = key(())
    env: dict[str, str] = key(default_factory=dict)


@dataclass(frozen=True)
class DeflateSpec:
    """How a program speaks permessage-deflate (runtimes.toml's ``deflate`` table; the
    deflate axis, deflate.py): a server's ``args`` turn it on, a client's ``env`` or
    ``args`` make it offer it (empty: it offers it as its runtime ships it); ``command``
    replaces the program's command line where compression is another build (lws-echo-deflate)."""

    command: tuple[str, ...] | None = key(None, nonempty=True)
    args: tuple[str, ...] = key(())
    env: dict[str, str] = key(default_factory=dict)
    defaults: dict[str, Any] = key(default_factory=dict)  # what the runtime does unless told (ws: threshold)
    no_takeover: OfferSpec | None = key(None)  # clients: how it offers no context takeover (None: it cannot)


@dataclass(frozen=True)
class Program:
    """A server or a client: a command line run from the repository root."""

    name: str
    kind: str  # "server" or "client"
    runtime: str = key()
    label: str = key()
    command: tuple[str, ...] = key(nonempty=True)
    env: dict[str, str] = key(default_factory=dict, coerce=True)
    requires: tuple[str, ...] = key(())
    # what builds ``requires``: "make setup" (a missing file fails its cells), or a step of
    # its own outside it ("make setup-arm": its cells are n/a until that has run)
    setup: str = key("make setup", nonempty=True)
    ready_timeout_s: float = key(20.0)  # servers: how long to wait for the readiness line
    features: tuple[str, ...] = key(())  # what it can do beyond plain echo (see runtimes.toml)
    kinds: tuple[str, ...] | None = key(None, nonempty=True)  # clients: the workload kinds it runs (None: all)
    notes: dict[str, str] = key(default_factory=dict)  # why a kind or feature is missing
    default: bool = key(True)  # part of the matrix unless named explicitly (ablation variants are not)
    echo_checks: bool = True  # clients: check the echoes (False only for the twins of --verify both)
    tls: TlsSpec | None = key(None, check=lambda where, spec, what: _names_a_certificate(f"{where}: {what}", spec))
    # how it speaks TLS (None: it cannot)
    deflate: DeflateSpec | None = key(None)  # how it speaks permessage-deflate (None: it cannot)
    secure: bool = False  # this instance runs over TLS (a server's "/wss" twin, a client in its cells)
    compressed: bool = False  # this instance runs with permessage-deflate on (deflate.py: "/deflate" twins)
    twin_of: str | None = None  # a twin's catalog name (NAME/wss, NAME/unchecked): scopes treat it as NAME
    barrier: str = key("stdin")  # clients: how they take the two barriers (hold.py): "stdin" or "http" (k6)
    expect: dict[str, Any] = key(default_factory=dict, check=lambda where, table, what: _expect(where, table))
    # what it must report of itself: "ws.bufferutil" = true

    def unmet(self, reported: dict[str, Any] | None, where: str) -> str | None:
        """Why what the program reported of itself (a client's result line, a server's
        WSBENCH-INFO line; ``where`` names it) is not what its catalog entry expects, or None.
        Keys are dotted paths into the reported object."""
        for dotted, want in self.expect.items():
            value: Any = reported
            for part in dotted.split("."):
                value = value.get(part) if isinstance(value, dict) else None
            if value is None:
                return (f"its {where} does not say {dotted} (harness/runtimes.toml expects {dotted} = "
                        f"{_toml(want)})")
            if value != want or type(value) is not type(want):
                return f"its {where} says {dotted} = {_toml(value)}, harness/runtimes.toml expects {_toml(want)}"
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

    def unbuilt(self) -> str | None:
        """Why a program built by a step outside ``make setup`` cannot run here (its cells
        are n/a, not failed), or None: built, or built by ``make setup`` (``missing``)."""
        missing = self.missing() if self.setup != "make setup" else []
        return f"is not built ({missing[0]} is missing; run: {self.setup})" if missing else None


def tls_twins(servers: list[Program], values: dict[str, str]) -> list[Program]:
    """Each server's TLS twin (``Program.over_tls``) with the certificates ``values`` name;
    a server that cannot speak TLS is a one-line error naming it."""
    twins = []
    for server in servers:
        why = server.cannot_tls()
        if why:
            raise WsbenchError(f"server '{server.name}' {why}")
        twins.append(server.over_tls(values))
    return twins


def on_axis(mode: str, servers: list[Program], twins: list[Program]) -> list[Program]:
    """The servers of a run along an axis with twins (TLS, deflate): the twins instead
    ("on"), or each server beside its twin, interleaved ("both")."""
    return twins if mode == "on" else [s for pair in zip(servers, twins) for s in pair]


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


@dataclass(frozen=True)
class Reference:
    """``[reference]``: the server scoped workloads compare clients against, and the client
    they drive servers with."""

    server: str | None = key(None)
    client: str | None = key(None)


def load_catalog(path: Path = RUNTIMES_FILE) -> Catalog:
    data = tomlfile.load(path)
    where = relative(path)
    tomlfile.check_keys(where, data, {"runtimes", "servers", "clients"}, {"reference"})
    runtimes = {name: Runtime(name, **tomlfile.read(f"{where}: runtime '{name}'", table, Runtime))
                for name, table in tomlfile.tables(where, data, "runtimes").items()}
    servers = {name: _program(f"{where}: server '{name}'", name, "server", table, runtimes)
               for name, table in tomlfile.tables(where, data, "servers").items()}
    clients = {name: _program(f"{where}: client '{name}'", name, "client", table, runtimes)
               for name, table in tomlfile.tables(where, data, "clients").items()}
    reference = tomlfile.value(where, data.get("reference", {}), Reference, "reference")
    if reference.server is not None and reference.server not in servers:
        raise WsbenchError(f"{where}: reference server '{reference.server}' is not a server")
    if reference.client is not None and reference.client not in clients:
        raise WsbenchError(f"{where}: reference client '{reference.client}' is not a client")
    return Catalog(runtimes, servers, clients, reference.server, reference.client)


def _program(where: str, name: str, kind: str, table: Any, runtimes: dict[str, Runtime]) -> Program:
    program = Program(name=name, kind=kind, **tomlfile.read(where, table, Program))
    if program.runtime not in runtimes:
        raise WsbenchError(f"{where}: unknown runtime '{program.runtime}'")
    if program.barrier not in BARRIERS or (kind == "server" and program.barrier != "stdin"):
        raise WsbenchError(f"{where}: barrier must be one of {', '.join(BARRIERS)} (clients only), got "
                           f"'{program.barrier}'")
    return program


def _expect(where: str, table: dict[str, Any]) -> dict[str, Any]:
    """``expect``: dotted keys of what the program reports of itself, each a bool, string or number."""
    for name, value in table.items():
        if not isinstance(value, (bool, str, int, float)):
            raise WsbenchError(f"{where}: expect.{name} must be a boolean, string or number")
    return dict(table)


def _toml(value: Any) -> str:
    return "true" if value is True else "false" if value is False else json.dumps(value)


def _names_a_certificate(where: str, spec: TlsSpec) -> TlsSpec:
    used = " ".join((*(spec.command or ()), *spec.args, *spec.env.values()))
    if not any(p in used for p in certificates.PLACEHOLDERS):
        raise WsbenchError(f"{where}: names no certificate ({', '.join(certificates.PLACEHOLDERS)}): how would it "
                           "trust the test CA or present the server certificate?")
    return spec
