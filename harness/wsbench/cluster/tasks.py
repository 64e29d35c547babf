"""What runs on a worker: a shard of one repetition, the conductor on the server's host,
and the probes of a host before the run. Each is a plain function the coordinator submits
to one worker (``workers=[address]``, never elsewhere); what it returns is plain data.

A shard is the harness's own measurement (``measure.run_client``) against the target, with
the barrier (barrier.ShardHook) where it writes ``GO``: the readings of the client and its
``GO`` stay on the client's host, and every shard's ``GO`` follows the one release.

The server's readings: its process on the server's host (``--target-pid``, or found as
the process listening on the target's port there), read like a server wsbench starts
(procfs: CPU-time clock and VmHWM), from the barrier's release to the last shard's end.
"""

from __future__ import annotations

import ipaddress
import os
import socket
import struct
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from .. import environment, procfs
from ..catalog import Program, Runtime
from ..measure import run_client
from ..model import Sample, Settings
from ..target import ExternalServer
from ..verify import verify_echo
from ..workloads import Workload
from .start import Names, ShardHook, conduct

SHARD_ENV = "WSBENCH_SHARD"  # I/N, in every shard's client environment


def _worker_client() -> tuple[Any, str]:
    from distributed import get_client, get_worker

    return get_client(), get_worker().address


def _dir(path: str) -> Path:
    """The clients' logs: ``path`` as it is on a local cluster; on another host, under the
    worker's own directory (``dask worker --local-directory``)."""
    from distributed import get_worker

    p = Path(path)
    p = p if p.is_absolute() else Path(get_worker().local_directory) / "wsbench-logs" / p
    p.mkdir(parents=True, exist_ok=True)
    return p


def run_shard(prefix: str, shard: int, shards: int, client: Program, server: Program, workload: Workload, rep: int,
              log_dir: str, settings: Settings, ready_timeout_s: float, phase_timeout_s: float) -> dict[str, Any]:
    """Shard ``shard`` of ``shards`` of one repetition: the client against the target,
    ``GO`` from the barrier. Returns the sample and the shard's times (its wall clock)."""
    engine, address = _worker_client()
    hook = ShardHook(engine, Names(prefix), shard, ready_timeout_s, phase_timeout_s)
    program = replace(client, env={**client.env, SHARD_ENV: f"{shard}/{shards}"})
    logs = _dir(log_dir)
    sample = Sample(rep=rep)
    try:
        sample = run_client(program, ExternalServer(server, logs / "target.log"), workload, rep, logs, settings,
                            observer=hook)
    except Exception as exc:  # one line in the sample, never a traceback in the run
        sample.error = f"shard {shard}: {type(exc).__name__}: {exc}"
    finally:
        hook.finish(sample.error)
    return {"sample": sample, "go_wall": hook.go_wall, "end_wall": hook.end_wall, "worker": address}


def conduct_here(prefix: str, shards: int, ready_timeout_s: float, phase_timeout_s: float,
                 pids: list[int] | None) -> dict[str, Any]:
    """The barrier's conductor on the server's host, reading the server around it."""
    engine, _ = _worker_client()
    return conduct(engine, Names(prefix), shards, ready_timeout_s, phase_timeout_s,
                   ServerReadings(pids) if pids else None)


def probe_load_host(clients: list[Program], runtimes: list[Runtime], target_url: str) -> dict[str, Any]:
    """A load host before the run: its machine and the clients' runtimes (environment),
    the clients' files it lacks, and whether the target echoes byte-exact from here."""
    check = verify_echo(target_url)
    return {"environment": environment.collect(runtimes),
            "missing": {c.name: c.missing() for c in clients if c.missing()},
            "verify": {"ok": check.ok, "error": check.error, "checks": len(check.checks)}}


def probe_server_host(host: str, port: int, pids: list[int] | None) -> dict[str, Any]:
    """The server's process(es) on this host: the ones given (checked to run here), or the
    ones listening on the target's port (on the target's address or a wildcard)."""
    if pids:
        gone = [p for p in pids if not procfs.running(p)]
        if gone:
            return {"pids": [], "error": f"no running process {gone[0]} on {socket.gethostname()}"}
        return {"pids": pids, "how": f"--target-pid {', '.join(map(str, pids))}", "names": [_name(p) for p in pids]}
    found = listening_pids(host, port)
    if not found:
        return {"pids": [], "error": f"no process of this host ({socket.gethostname()}) listens on port {port} "
                                     "(or its /proc entries cannot be read: run the worker as the server's user)"}
    return {"pids": found, "how": f"the process listening on port {port}", "names": [_name(p) for p in found]}


def _name(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/comm").read_text().strip()
    except OSError:
        return "?"


def listening_pids(host: str, port: int) -> list[int]:
    """Processes holding a listening TCP socket on ``port`` whose address is one ``host``
    stands for, or a wildcard; if none matches the address, every listener on the port
    (a server in a pod listens on the pod's address, the target is the Service's)."""
    wanted = set()
    try:
        wanted = {ipaddress.ip_address(i[4][0].split("%")[0]) for i in socket.getaddrinfo(host, port)}
    except OSError:
        pass
    exact, anywhere = set(), set()
    for table in ("tcp", "tcp6"):
        try:
            lines = Path(f"/proc/net/{table}").read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) < 10 or fields[3] != "0A":  # 0A: LISTEN
                continue
            addr_hex, port_hex = fields[1].split(":")
            if int(port_hex, 16) != port:
                continue
            address = _address(addr_hex)
            (exact if address in wanted or address.is_unspecified else anywhere).add(fields[9])
    inodes = exact or anywhere
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            links = {os.readlink(fd) for fd in (entry / "fd").iterdir()}
        except OSError:
            continue
        if any(f"socket:[{inode}]" in links for inode in inodes):
            pids.append(int(entry.name))
    return sorted(pids)


def _address(hex_text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
    """An address of /proc/net/tcp{,6}: 32-bit words in host byte order."""
    raw = bytes.fromhex(hex_text)
    words = b"".join(struct.pack("=I", struct.unpack(">I", raw[i:i + 4])[0]) for i in range(0, len(raw), 4))
    return ipaddress.ip_address(words)


class ServerReadings:
    """The server's CPU time and peak RSS over the union of the shards' phases: VmHWM reset
    and CPU clock read at the barrier's release, both read after the last shard's end.
    Several processes (a server that forks) are summed."""

    def __init__(self, pids: list[int]) -> None:
        self.pids = pids
        self.cpu0: int | None = None
        self.errors: list[str] = []
        self.rss_reset = False

    def start(self) -> None:
        self.errors = [f"server peak RSS: {why}" for why in (procfs.reset_peak_rss(p) for p in self.pids) if why]
        self.rss_reset = not self.errors
        values = [procfs.process_cpu_ns(p) for p in self.pids]
        self.cpu0 = sum(values) if all(v is not None and v > 0 for v in values) else None  # type: ignore[misc]
        if self.cpu0 is None:
            self.errors.append(f"server CPU clock could not be read at the start barrier (processes {self.pids})")
        self.t0 = time.time()

    def end(self) -> dict[str, Any]:
        values = [procfs.process_cpu_ns(p) for p in self.pids]
        cpu1 = sum(values) if all(v is not None for v in values) else None  # type: ignore[misc]
        hwm = [procfs.peak_rss_kib(p) for p in self.pids]
        out: dict[str, Any] = {"server_cpu_s": None, "server_peak_rss_kib": None, "reading_errors": self.errors,
                               "seconds": time.time() - self.t0}
        if self.cpu0 is not None and cpu1 is not None:
            if cpu1 < self.cpu0:
                self.errors.append(f"server CPU clock ran backwards ({self.cpu0} ns, then {cpu1} ns)")
            else:
                out["server_cpu_s"] = (cpu1 - self.cpu0) / 1e9
        elif self.cpu0 is not None:
            self.errors.append("server CPU clock could not be read at the end of the phases")
        if self.rss_reset and all(h is not None for h in hwm):
            out["server_peak_rss_kib"] = sum(hwm)  # type: ignore[arg-type]
        elif self.rss_reset:
            self.errors.append("server peak RSS: /proc/PID/status not readable at the end")
        return out
