"""Servers wsbench did not start: ``wsbench run --target [NAME=]ws://HOST:PORT/PATH``.

A target is measured like a server the harness started, after the same verification
(``verify.verify_echo``); a target that fails it is refused. Its CPU time and memory are
not readable ("n/a (external)") unless ``--target-pid NAME=PID`` names the process on this
machine (a container's process as the host sees it, a server the user started), which is
then read exactly like a harness-started server's (``procfs``).

Only loopback targets are accepted unless ``allow_remote``: a remote server's figures
include a network path that wsbench neither controls nor records, and sending load to
another machine has to be meant.
"""

from __future__ import annotations

import ipaddress
import socket
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from . import procfs
from .catalog import Catalog, Program, Runtime
from .errors import WsbenchError

EXTERNAL = "n/a (external)"
DEFAULT_NAME = "target"
EXTERNAL_RUNTIME = Runtime("external", "external server", ())


@dataclass(frozen=True)
class TargetUrl:
    url: str
    host: str
    port: int
    path: str  # the URL's path and query, "/" at least


def parse_url(url: str, allow_remote: bool) -> TargetUrl:
    """Check ``url`` (ws://HOST:PORT/PATH); refuse anything else, and a non-loopback
    host unless ``allow_remote``."""
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise WsbenchError(f"target '{url}': not a URL ({exc})") from None
    if parts.scheme != "ws":
        raise WsbenchError(f"target '{url}': only ws:// URLs can be measured (the clients' TLS would be "
                           "part of every figure), write ws://HOST:PORT/PATH")
    if not parts.hostname or port is None:
        raise WsbenchError(f"target '{url}': name the host and the port: ws://HOST:PORT/PATH")
    if parts.fragment or parts.username or parts.password:
        raise WsbenchError(f"target '{url}': no user, password or #fragment: ws://HOST:PORT/PATH")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    if not allow_remote:
        outside = non_loopback(parts.hostname, port)
        if outside:
            raise WsbenchError(
                f"target '{url}': {parts.hostname} is {outside} outside loopback; wsbench measures "
                "loopback servers only, because a remote server's figures include a network path wsbench "
                "neither controls nor records, and load sent to another machine has to be meant: "
                "pass --allow-remote to measure it anyway")
    return TargetUrl(url, parts.hostname, port, path)


def non_loopback(host: str, port: int) -> str | None:
    """None when every address ``host`` resolves to is a loopback address; else a phrase
    naming the first one that is not (or why it does not resolve)."""
    try:
        literal = ipaddress.ip_address(host.strip("[]"))
        return None if literal.is_loopback else "an address"
    except ValueError:
        pass
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        return f"a name that does not resolve ({exc.strerror}), so possibly"
    for info in infos:
        address = ipaddress.ip_address(str(info[4][0]).split("%")[0])
        if not address.is_loopback:
            return f"a name that resolves to {address},"
    return None


def parse_spec(spec: str) -> tuple[str, str]:
    """``NAME=URL`` or ``URL`` (named "target")."""
    name, sep, url = spec.partition("=")
    if sep and not any(c in name for c in ":/?"):  # NAME=URL (a bare URL's first "=" is in its query)
        if not name or not url:
            raise WsbenchError(f"--target '{spec}': write [NAME=]ws://HOST:PORT/PATH")
        return name, url
    return DEFAULT_NAME, spec


def parse_pids(specs: list[str] | None, names: set[str]) -> dict[str, int]:
    """``--target-pid NAME=PID`` (or a bare PID for the only target)."""
    out: dict[str, int] = {}
    for spec in specs or []:
        name, _, value = spec.rpartition("=")
        if not name:
            if len(names) != 1:
                raise WsbenchError(f"--target-pid '{spec}': name the target (NAME=PID), there are {len(names)}")
            name = next(iter(names))
        if name not in names:
            raise WsbenchError(f"--target-pid '{spec}': no target named '{name}' (targets: {', '.join(sorted(names))})")
        try:
            pid = int(value)
        except ValueError:
            raise WsbenchError(f"--target-pid '{spec}': '{value}' is not a process id") from None
        if pid <= 0 or not procfs.running(pid):
            raise WsbenchError(f"--target-pid '{spec}': no running process {pid} on this machine")
        out[name] = pid
    return out


def target_programs(specs: list[str], catalog: Catalog, allow_remote: bool) -> tuple[Catalog, list[Program]]:
    """The targets as server programs, and the catalog with them (and the "external"
    runtime). A target named after a catalog server keeps that server's label, runtime
    and features (a container of that server); any other name is a plain echo server."""
    programs: list[Program] = []
    for spec in specs:
        name, url = parse_spec(spec)
        checked = parse_url(url, allow_remote)
        if any(p.name == name for p in programs):
            raise WsbenchError(f"--target: the name '{name}' is given twice; name them: NAME=ws://...")
        known = catalog.servers.get(name)
        if known is not None:
            program = replace(known, command=(checked.url,), requires=(), env={}, expect={},
                              label=f"{known.label} @ {checked.host}:{checked.port}")
        else:
            program = Program(name=name, kind="server", runtime=EXTERNAL_RUNTIME.name,
                              label=f"{name} @ {checked.host}:{checked.port}", command=(checked.url,),
                              notes={"fragments": "an external server: ?fragments is not assumed",
                                     "serve": "an external server: ?serve is not assumed"})
        programs.append(program)
    runtimes = {**catalog.runtimes, EXTERNAL_RUNTIME.name: EXTERNAL_RUNTIME}
    servers = {**catalog.servers, **{p.name: p for p in programs}}
    return replace(catalog, runtimes=runtimes, servers=servers), programs


def is_target(program: Program) -> bool:
    return program.kind == "server" and len(program.command) == 1 and program.command[0].startswith("ws://")


@dataclass
class ExternalServer:
    """A target as a ``server.ServerHandle``: nothing to start or stop."""

    program: Program
    log: Path
    target_pid: int | None = None

    @property
    def pid(self) -> int | None:
        return self.target_pid

    @property
    def readings(self) -> str:
        if self.target_pid is None:
            return EXTERNAL
        return f"/proc/{self.target_pid} (given with --target-pid): CPU-time clock and VmHWM, as for a started server"

    def url(self, path: str = "/") -> str:
        """The target's URL with a workload's path: its query (e.g. ?fragments=2) is added
        to the target's own path."""
        base = parse_url(self.program.command[0], allow_remote=True)
        root = f"ws://{base.host if ':' not in base.host else '[' + base.host + ']'}:{base.port}"
        own = base.path
        if path in ("", "/"):
            return root + own
        query = path.split("?", 1)[1] if "?" in path else ""
        if not query:
            return root + own
        return root + own + ("&" if "?" in own else "?") + query

    def alive(self) -> bool:
        return self.target_pid is None or procfs.running(self.target_pid)

    def stop(self) -> str | None:
        return None

    def stdout_mark(self) -> int:
        return 0

    def printed(self, since: int) -> dict[str, list[dict[str, Any]]]:
        return {}  # a target's stdout is not ours to read
