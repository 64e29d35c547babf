"""The engine: Dask distributed (docs/scaling.md, "The engine", says why not Ray).

``--cluster ADDRESS`` is a scheduler the user operates (``tcp://HOST:PORT``: started with
``dask scheduler`` and ``dask worker`` over SSH, ``distributed``'s ``SSHCluster``, or on
Kubernetes, deploy/kubernetes/), or ``local:N``: a scheduler and N load workers started
here for the run, as processes of our own (``procs.spawn``: own process groups, killed
when the run ends, also on Ctrl-C), every one listening on a loopback address only:
the load workers on 127.0.0.2, 127.0.0.3, ... (loopback addresses standing for hosts),
and one more worker, ``server-host``, on the target's own address, standing for a worker
on the server's host.

Roles: the worker on the server's host is the one named by ``--server-worker`` (a name,
an address or a host), else the one whose host is the target's address; it reads the
server and conducts the barrier. Every other worker is a load host and runs one shard.
"""

from __future__ import annotations

import concurrent.futures
import ipaddress
import json
import logging
import re
import socket
import sys
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import procs
from ..errors import WsbenchError
from ..paths import ROOT

LOCAL = re.compile(r"^local:(\d+)$")
ADDRESS = re.compile(r"^(tcp|tls)://\S+:\d+$")
MAX_LOCAL = 32
START_TIMEOUT_S = 90.0  # a local cluster on a busy 2-core machine takes seconds
SERVER_HOST_WORKER = "server-host"
WORKER_THREADS = 2  # one for a shard or the conductor, one for probes


@dataclass(frozen=True)
class Worker:
    address: str  # tcp://HOST:PORT, as the scheduler knows it
    host: str
    name: str

    @property
    def label(self) -> str:
        return f"worker {self.name} on host {self.host} ({self.address})"

    def to_json(self) -> dict[str, str]:
        return {"address": self.address, "host": self.host, "name": self.name}


@dataclass
class Engine:
    """A client of a Dask scheduler, and what we started for it (``local:N``)."""

    spec: str
    address: str
    client: Any
    workers: list[Worker]
    started: list[Any] = field(default_factory=list)  # our processes (local:N)
    version: str = ""

    @property
    def local(self) -> bool:
        return bool(self.started)

    def close(self) -> None:
        try:
            self.client.close(timeout=5)
        except Exception:  # the scheduler may be gone: nothing to close then
            pass
        _stop(self.started)
        self.started.clear()

    def clock_offsets(self, tries: int = 5) -> dict[str, dict[str, float]]:
        """Each worker's wall clock against ours: ``offset_s`` (worker minus coordinator, at
        the midpoint of the fastest of ``tries`` round trips) and ``uncertainty_s`` (half
        that round trip: the offset is known no better)."""
        out: dict[str, dict[str, float]] = {}
        for w in self.workers:
            best: tuple[float, float] | None = None
            for _ in range(tries):
                t0 = time.time()
                theirs = self.client.run(time.time, workers=[w.address])[w.address]
                t1 = time.time()
                if best is None or t1 - t0 < 2 * best[1]:
                    best = (theirs - (t0 + t1) / 2, (t1 - t0) / 2)
            assert best is not None
            out[w.address] = {"offset_s": best[0], "uncertainty_s": best[1]}
        return out


def _stop(started: list[Any]) -> None:
    """The workers (at once), then the scheduler: each group SIGTERMed, SIGKILLed if it lingers."""
    workers, scheduler = started[1:], started[:1]
    for group in (workers, scheduler):
        if group:
            with concurrent.futures.ThreadPoolExecutor(len(group)) as pool:
                list(pool.map(lambda proc: procs.terminate(proc, grace_s=2.0), group))


def connect(spec: str, log_dir: Path, server_host: str | None) -> Engine:
    """The engine named by ``--cluster``, its workers listed (a local cluster is started
    first). Errors are one line."""
    try:
        import distributed
    except ImportError:
        raise WsbenchError("--cluster needs Dask distributed (requirements.txt): run make setup") from None
    log_dir.mkdir(parents=True, exist_ok=True)
    _quiet_logs(log_dir / "dask-client.log")
    local = LOCAL.match(spec)
    started: list[Any] = []
    expected = 1
    if local:
        n = int(local.group(1))
        if not 1 <= n <= MAX_LOCAL:
            raise WsbenchError(f"--cluster {spec}: a local cluster has 1 to {MAX_LOCAL} load workers")
        address, started = _start_local(n, log_dir, server_host)
        expected = len(started) - 1
    elif ADDRESS.match(spec):
        address = spec
    else:
        raise WsbenchError(f"--cluster '{spec}': give a Dask scheduler's address (tcp://HOST:PORT) or local:N")
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            client = distributed.Client(address, timeout=30, set_as_default=False)
        for w in caught:
            logging.getLogger("distributed").warning("%s", w.message)
        try:
            client.wait_for_workers(expected, timeout=START_TIMEOUT_S)
        except (TimeoutError, OSError):
            client.close()
            raise WsbenchError(f"--cluster {spec}: fewer than {expected} worker(s) joined the scheduler at "
                               f"{address} within {START_TIMEOUT_S:g} s (logs: {log_dir})") from None
    except (OSError, TimeoutError) as exc:
        _stop(started)
        raise WsbenchError(f"--cluster {spec}: cannot reach the scheduler at {address}: {exc}") from None
    except BaseException:
        _stop(started)
        raise
    workers = [Worker(addr, str(info.get("host")), str(info.get("name", addr)))
               for addr, info in client.scheduler_info(n_workers=-1)["workers"].items()]
    return Engine(spec, address, client, sorted(workers, key=_natural), started, distributed.__version__)


def _natural(w: Worker) -> tuple[Any, ...]:
    return tuple(int(p) if p.isdigit() else p for p in re.split(r"(\d+)", w.name)) + (w.address,)


def _quiet_logs(path: Path) -> None:
    """Dask's own log lines go to a file of the run, not between the progress lines."""
    logger = logging.getLogger("distributed")
    for h in list(logger.handlers):
        logger.removeHandler(h)
    handler = logging.FileHandler(path)
    handler.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def local_hosts(n: int, server_host: str | None) -> list[str]:
    """N loopback addresses for the load workers, none of them the server's."""
    hosts = []
    last = 1
    while len(hosts) < n:
        last += 1
        if f"127.0.0.{last}" != server_host:
            hosts.append(f"127.0.0.{last}")
    return hosts


def _start_local(n: int, log_dir: Path, server_host: str | None) -> tuple[str, list[Any]]:
    """A scheduler and N load workers (and the server host's worker when the target is on
    a loopback IPv4 address), all on loopback addresses, dashboards included."""
    scheduler_file = log_dir / "dask-scheduler.json"
    scheduler_file.unlink(missing_ok=True)
    py = sys.executable
    started = [procs.spawn([py, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1", "--port", "0",
                            "--dashboard-address", "127.0.0.1:0", "--no-dashboard",
                            "--scheduler-file", str(scheduler_file)],
                           cwd=ROOT, stderr_path=log_dir / "dask-scheduler.log")]
    try:
        address = _scheduler_address(scheduler_file, started[0], log_dir)
        roles = [(f"load-{i}", host) for i, host in enumerate(local_hosts(n, server_host), 1)]
        if server_host is not None and _loopback_v4(server_host):
            roles.append((SERVER_HOST_WORKER, server_host))
        for name, host in roles:
            started.append(procs.spawn(
                [py, "-m", "distributed.cli.dask_worker", address, "--host", host, "--name", name, "--no-nanny",
                 "--nthreads", str(WORKER_THREADS), "--memory-limit", "0", "--dashboard-address", f"{host}:0",
                 "--no-dashboard", "--local-directory", str(log_dir / "dask" / name)],
                cwd=ROOT, stderr_path=log_dir / f"dask-{name}.log"))
    except BaseException:
        _stop(started)
        raise
    return address, started


def _scheduler_address(path: Path, proc: Any, log_dir: Path) -> str:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise WsbenchError(f"--cluster local: the Dask scheduler exited with code {proc.returncode} "
                               f"(log: {log_dir / 'dask-scheduler.log'})")
        try:
            return str(json.loads(path.read_text())["address"])
        except (OSError, ValueError, KeyError):
            time.sleep(0.1)
    raise WsbenchError(f"--cluster local: the Dask scheduler did not start within {START_TIMEOUT_S:g} s "
                       f"(log: {log_dir / 'dask-scheduler.log'})")


def _loopback_v4(host: str) -> bool:
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.version == 4 and address.is_loopback


def addresses_of(host: str) -> set[str]:
    """The IP addresses a host name or literal stands for (empty when it does not resolve)."""
    try:
        return {str(ipaddress.ip_address(host.strip("[]")))}
    except ValueError:
        pass
    try:
        return {str(info[4][0]).split("%")[0] for info in socket.getaddrinfo(host, None, type=socket.SOCK_STREAM)}
    except OSError:
        return set()


def roles(workers: list[Worker], target_host: str, server_worker: str | None) -> tuple[Worker | None, list[Worker]]:
    """(the worker on the server's host or None, the load workers in shard order)."""
    server: Worker | None = None
    if server_worker is not None:
        chosen = [w for w in workers if server_worker in (w.name, w.address, w.host)]
        if not chosen:
            known = ", ".join(f"{w.name} ({w.address})" for w in workers) or "none"
            raise WsbenchError(f"--server-worker {server_worker}: no worker has that name, address or host "
                               f"(workers: {known})")
        server = chosen[0]
    else:
        wanted = addresses_of(target_host)
        server = next((w for w in workers if addresses_of(w.host) & wanted), None)
    load = [w for w in workers if w is not server]
    if not load:
        raise WsbenchError("the cluster has no load worker: every worker but the one on the server's host runs "
                           f"a shard (workers: {', '.join(w.label for w in workers)})")
    return server, load


def check_reach(target_host: str, load: list[Worker]) -> None:
    """A loopback target means each load host's own loopback: only workers on this machine
    (on loopback addresses themselves) can share it."""
    if not _loopback(target_host):
        return
    away = [w for w in load if not _loopback(w.host)]
    if away:
        raise WsbenchError(f"target host {target_host} is a loopback address, but {away[0].label} is not on this "
                           "machine: give the server's address that the load hosts reach (with --allow-remote)")


def _loopback(host: str) -> bool:
    found = addresses_of(host)
    return bool(found) and all(ipaddress.ip_address(a).is_loopback for a in found)
