"""The deflate axis of a run (``wsbench run --deflate off|on|both``, issue 32): servers with
their runtime's own permessage-deflate (RFC 7692) as twins ``NAME/deflate``, the clients
that offer it as their runtimes ship them, and what a server prints of each connection
(servers/README.md, item 15: the ``WSBENCH-DEFLATE`` line) summed up per sample.

Off, every server refuses compression (the contract's default); on, each server runs as
its twin (the catalog's ``deflate`` arguments, e.g. ``--deflate``), and a cell whose server
or client cannot compress is n/a with the catalog's reason; both puts the two side by side,
interleaved, like ``--tls both``."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from .catalog import Program, on_axis
from .errors import WsbenchError
from .workloads import AXIS_MODES, Workload

TWIN = "/deflate"
DEFLATE_LINE = re.compile(r'^WSBENCH-DEFLATE offered=("[^"]*"|none|\?) response=("[^"]*"|none|\?)$')
NONE = "none"  # the header was not there: the client offered nothing, or the server refused


def cannot_deflate(program: Program) -> str | None:
    """Why ``program`` cannot take part with permessage-deflate on, or None if it can."""
    if program.deflate is None:
        return program.notes.get("deflate", "has no permessage-deflate (no deflate entry in harness/runtimes.toml)")
    return None


def cannot_offer_no_takeover(client: Program) -> str | None:
    """Why ``client`` cannot offer permessage-deflate without context takeover (a workload
    with ``no_context_takeover``), or None if it can."""
    if client.deflate is not None and client.deflate.no_takeover is None:
        return client.notes.get("deflate-no-takeover", "has no option to offer permessage-deflate without "
                                "context takeover (no deflate.no_takeover entry in harness/runtimes.toml)")
    return None


def with_deflate(program: Program, workload: Workload | None = None) -> Program:
    """``program`` with permessage-deflate on: a server becomes its twin ``NAME/deflate``
    (started with the catalog's deflate arguments; one that cannot compress keeps its
    command, and its cells are n/a), a client keeps its name and offers it; without
    context takeover where ``workload`` asks for it (``no_context_takeover``)."""
    spec = program.deflate
    command = ((spec.command or program.command) + spec.args) if spec else program.command
    env = {**program.env, **(spec.env if spec else {})}
    if spec and spec.no_takeover and workload is not None and workload.no_context_takeover:
        command, env = command + spec.no_takeover.args, {**env, **spec.no_takeover.env}
    requires = program.requires + ((spec.command[0],) if spec and spec.command else ())
    if program.kind == "server":
        return replace(program, name=f"{program.name}{TWIN}", label=f"{program.label} + permessage-deflate",
                       command=command, env=env, requires=requires, compressed=True,
                       twin_of=program.twin_of or program.name)
    return replace(program, command=command, env=env, compressed=True)


def deflate_axis(mode: str, servers: list[Program]) -> tuple[list[Program], dict[str, Any] | None]:
    """The servers over the deflate axis: as they are (off), their twins (on), or both
    side by side (both); with what the run records of it (settings.deflate)."""
    if mode not in AXIS_MODES:
        raise WsbenchError(f"--deflate must be one of {', '.join(AXIS_MODES)}, got '{mode}'")
    if mode == "off":
        return servers, None
    return on_axis(mode, servers, [with_deflate(s) for s in servers]), {"mode": mode}


def not_applicable(server: Program, client: Program, workload: Workload | None = None) -> str | None:
    """Why a cell of a server with deflate on cannot run (its server or its client cannot
    compress, or the workload asks for no context takeover and the client cannot offer it),
    or None."""
    if not server.compressed:
        return None
    why = cannot_deflate(server)
    if why:
        return f"server {server.catalog_name} {why}"
    why = cannot_deflate(client) or (
        cannot_offer_no_takeover(client) if workload is not None and workload.no_context_takeover else None)
    return f"client {client.name} {why}" if why else None


def record(program: Program) -> dict[str, Any] | None:
    """What a run records of a program's deflate (schema 12): for a server twin and for every
    client of a run with the axis, the ``args`` and ``env`` that turn it on and the runtime's
    ``defaults`` where no argument says otherwise (e.g. ws' threshold), or ``cannot`` with
    the reason."""
    why = cannot_deflate(program)
    if why or program.deflate is None:
        return {"cannot": why}
    spec = program.deflate
    return {"args": list(spec.args), "env": dict(spec.env), "defaults": dict(spec.defaults),
            **({"command": list(spec.command)} if spec.command else {}),
            **({"no_takeover": {"args": list(spec.no_takeover.args), "env": dict(spec.no_takeover.env)}}
               if spec.no_takeover else {})}


def parse_deflate_line(line: str) -> dict[str, str | None] | None:
    """A WSBENCH-DEFLATE line as ``offered`` and ``response``: the header's value, "none",
    or None where the server cannot tell (``?``); None for any other line."""
    m = DEFLATE_LINE.match(line.strip())
    if not m:
        return None
    offered, response = (None if v == "?" else v.strip('"') for v in m.groups())
    return {"offered": offered, "response": response}


def deflate_summary(lines: list[dict[str, Any]]) -> dict[str, Any] | None:
    """What a server printed of the connections of one sample: how many, how many it
    answered with permessage-deflate (None where it cannot tell of one), and the offers and
    responses (``"mixed: a, b"`` where the connections differ); None without a line."""
    if not lines:
        return None
    answers = [line.get("response") for line in lines]
    out: dict[str, Any] = {"connections": len(lines), "negotiated": None if None in answers else sum(
        1 for a in answers if a is not None and a.startswith("permessage-deflate"))}
    for key in ("offered", "response"):
        seen = sorted({str(line[key]) for line in lines if line.get(key) is not None})
        out[key] = None if not seen else seen[0] if len(seen) == 1 else "mixed: " + ", ".join(seen)
    return out


def negotiated(server_deflate: dict[str, Any] | None, client_extensions: str | None) -> bool | None:
    """Whether a sample's connections compressed: the server's account where it tells, else
    the client's (its WebSocket's ``extensions``, in its result line); None: neither tells."""
    if server_deflate and server_deflate.get("negotiated") is not None:
        return server_deflate["negotiated"] > 0
    if client_extensions is not None:
        return "permessage-deflate" in client_extensions
    if server_deflate and server_deflate.get("response") == NONE:
        return False
    return None
