"""A private Docker engine, started for a job and stopped by PID afterwards.

``dockerd`` runs with host networking only (``--bridge=none --iptables=false
--ip-masq=false``: no bridge, no NAT, no private-range address is ever created), its own
data root (kept between runs, so images and their layers are a cache), exec root, pid
file and socket, in a process group of its own. It is stopped by its PID — SIGTERM, then
SIGKILL of its group — on success, failure, timeout and Ctrl-C; every container still
running in it is removed first. An engine already answering on the socket (started by
another job) is used and left running.

Command line (used by the Makefile; commands/docker.py)::

    wsbench docker engine run -- CMD ...   # engine up, CMD with DOCKER_HOST set, engine down
    wsbench docker engine check            # can an engine be started here? (exit 0/1, one line)
"""

from __future__ import annotations

import ctypes
import os
import shutil
import signal
import subprocess
import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, NoReturn, Sequence

from .. import procs
from ..errors import WsbenchError

DOCKERD = "/usr/sbin/dockerd"
DOCKER = "/usr/bin/docker"  # Debian's docker.io client, whatever else is on PATH
DATA_ROOT = Path(os.environ.get("WSBENCH_DOCKER_DATA", "/var/lib/wsbench-docker"))
RUN_DIR = Path(os.environ.get("WSBENCH_DOCKER_RUN", "/run/wsbench-docker"))
START_TIMEOUT_S = 60.0
STOP_GRACE_S = 30.0
FLAGS = ("--bridge=none", "--iptables=false", "--ip6tables=false", "--ip-masq=false", "--userland-proxy=false",
         "--shutdown-timeout=5", "--log-level=warn")
INSTALL_HINT = "apt-get install docker.io docker-compose debootstrap"


@dataclass
class Engine:
    socket: Path
    pid: int | None  # None: an engine that was already running (not ours to stop)
    log: Path

    @property
    def host(self) -> str:
        return f"unix://{self.socket}"

    def env(self) -> dict[str, str]:
        """The environment for docker and docker-compose to talk to this engine."""
        return {**os.environ, "DOCKER_HOST": self.host, "DOCKER_BUILDKIT": "0", "COMPOSE_DOCKER_CLI_BUILD": "0"}

    def docker(self, *args: str, timeout_s: float = 600, check: bool = True) -> subprocess.CompletedProcess[str]:
        out = subprocess.run([DOCKER, *args], env=self.env(), capture_output=True, text=True, timeout=timeout_s,
                             stdin=subprocess.DEVNULL)
        if check and out.returncode != 0:
            said = (out.stderr or out.stdout).strip().splitlines()
            raise WsbenchError(f"docker {' '.join(args[:3])}: {said[-1] if said else f'exit {out.returncode}'}")
        return out


HOST_ONLY_NETWORKS = {"host", "none"}


def foreign_networks(engine: Engine) -> list[str]:
    """Networks other than host and none (there must never be any: no bridge, no
    private-range address)."""
    names = engine.docker("network", "ls", "--format", "{{.Name}}").stdout.split()
    return sorted(set(names) - HOST_ONLY_NETWORKS)


def unavailable() -> str | None:
    """Why no engine can be started here, or None."""
    for tool in (DOCKERD, DOCKER, "/usr/bin/containerd", "/usr/sbin/runc"):
        if not os.access(tool, os.X_OK):
            return f"{tool} is not installed ({INSTALL_HINT})"
    if os.geteuid() != 0:
        return "starting dockerd needs root"
    return None


def _answers(socket: Path) -> bool:
    if not socket.exists():
        return False
    try:
        out = subprocess.run([DOCKER, "-H", f"unix://{socket}", "version", "--format", "{{.Server.Version}}"],
                             capture_output=True, text=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return out.returncode == 0


def _child_setup() -> None:
    """In dockerd, before exec: SIGTERM (a clean shutdown) when its starter dies."""
    ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM, 0, 0, 0)  # PR_SET_PDEATHSIG


def start(data_root: Path = DATA_ROOT, run_dir: Path = RUN_DIR, timeout_s: float = START_TIMEOUT_S) -> Engine:
    why = unavailable()
    if why:
        raise WsbenchError(f"no Docker engine: {why}")
    run_dir.mkdir(parents=True, exist_ok=True)
    data_root.mkdir(parents=True, exist_ok=True)
    socket, log = run_dir / "docker.sock", data_root / "dockerd.log"
    if _answers(socket):
        return Engine(socket, None, log)
    pidfile = run_dir / "dockerd.pid"
    _stale(pidfile)
    argv = [DOCKERD, *FLAGS, f"--data-root={data_root}", f"--exec-root={run_dir}/exec",
            f"--pidfile={pidfile}", f"--host=unix://{socket}"]
    with open(log, "ab") as out:
        out.write(f"+ {' '.join(argv)}\n".encode())
        proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=out, start_new_session=True,
                                preexec_fn=_child_setup)
    engine = Engine(socket, proc.pid, log)
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise WsbenchError(f"dockerd exited with code {proc.returncode} while starting (log: {log}{_tail(log)})")
        if _answers(socket):
            return engine
        time.sleep(0.3)
    stop(engine)
    raise WsbenchError(f"dockerd did not answer on {socket} within {timeout_s:g} s (log: {log})")


def _stale(pidfile: Path) -> None:
    """A pid file left by an engine that died without cleaning up would stop dockerd."""
    try:
        pid = int(pidfile.read_text().strip())
    except (OSError, ValueError):
        return
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        pidfile.unlink(missing_ok=True)
        return
    raise WsbenchError(f"{pidfile} names process {pid}, which runs but does not answer on the socket; "
                       f"stop it (kill {pid}) and retry")


def _tail(log: Path) -> str:
    try:
        lines = [line for line in log.read_text(errors="replace").splitlines() if line.strip()]
    except OSError:
        return ""
    return f"; last line: {lines[-1][:200]}" if lines else ""


def stop(engine: Engine) -> str | None:
    """Remove its containers, then stop dockerd by PID (its process group is killed if it
    lingers). None, or why it could not be stopped. An engine that was not ours is left."""
    if engine.pid is None:
        return None
    problem = None
    try:
        ids = engine.docker("ps", "-aq", timeout_s=20, check=False).stdout.split()
        if ids:
            engine.docker("rm", "-f", *ids, timeout_s=60, check=False)
    except subprocess.TimeoutExpired:
        problem = "docker rm -f timed out"
    try:
        os.kill(engine.pid, signal.SIGTERM)  # dockerd alone first: it stops containerd and its shims in order
    except ProcessLookupError:
        pass
    except OSError as exc:
        problem = problem or f"cannot send SIGTERM to dockerd ({engine.pid}): {exc.strerror}"
    deadline = time.monotonic() + STOP_GRACE_S
    while time.monotonic() < deadline and _alive(engine.pid):
        time.sleep(0.1)
    problem = problem or procs.signal_group(engine.pid, signal.SIGKILL)
    _reap(engine.pid)
    return problem


def _alive(pid: int) -> bool:
    _reap(pid)
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] not in "ZXx"


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


@contextmanager
def running(data_root: Path = DATA_ROOT, run_dir: Path = RUN_DIR) -> Iterator[Engine]:
    """An engine for the ``with`` block, stopped at its end whatever happens (SIGTERM and
    SIGHUP become KeyboardInterrupt meanwhile, so the block unwinds through here)."""
    previous = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGTERM, signal.SIGHUP)}
    engine = start(data_root, run_dir)
    try:
        yield engine
    finally:
        problem = stop(engine)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if problem:
            print(f"wsbench docker: {problem}", file=sys.stderr)


def _interrupt(signum: int, frame: object) -> NoReturn:
    raise KeyboardInterrupt


def run_command(command: Sequence[str]) -> int:
    """``command`` with DOCKER_HOST set to a private engine, started for it and stopped
    after it; its exit code. On Ctrl-C its process group is stopped first."""
    if shutil.which(command[0]) is None and not Path(command[0]).exists():
        raise WsbenchError(f"{command[0]}: not found")
    with running() as engine:
        child = subprocess.Popen(list(command), env=engine.env(), start_new_session=True)
        try:
            return child.wait()
        except KeyboardInterrupt:
            problem = procs.signal_group(child.pid, signal.SIGTERM)
            try:
                child.wait(timeout=10)
            except subprocess.TimeoutExpired:
                problem = procs.signal_group(child.pid, signal.SIGKILL) or problem
                child.wait()
            if problem:
                print(f"wsbench docker: {problem}", file=sys.stderr)
            raise
