"""The machine and software a run was measured on, recorded with every result.

Besides the machine (CPU, cores, memory, kernel, CPU frequency governor) and every
runtime's exact version, the provenance of the figures: the harness commit and whether
the tree differs from it (and in which files), the hashes of the lockfiles the runtimes
were installed from and of every native binary measured, and the load average before the
run (``load_average_after`` is added when it ends).
"""

from __future__ import annotations

import glob
import hashlib
import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Iterable

from . import __version__
from .catalog import Runtime
from .paths import ROOT


# Files whose hashes say exactly what was installed and built.
LOCKFILES = ("package-lock.json", "requirements.txt")
BINARIES = ("build/prefix/bin/qjs", "build/quickjs-websocket/lws.so", "build/clients/wsbench_check.so",
            "build/bin/lws-echo", "build/bin/wsbench-loadgen", "build/prefix/lib/libwebsockets.so")


def collect(runtimes: Iterable[Runtime]) -> dict[str, Any]:
    dirty = _git("status", "--porcelain")
    return {
        "cpu_model": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "memory_total_kib": _meminfo("MemTotal"),
        "kernel": platform.release(),
        "os": _os_release(),
        "machine": platform.machine(),
        "cpu_governor": cpu_governor(),
        "python": platform.python_version(),
        "wsbench": __version__,
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(dirty) if dirty is not None else None,
        "git_dirty_files": [line[3:] for line in (dirty or "").splitlines()][:50],
        "lockfiles": {name: sha256_of(ROOT / name) for name in LOCKFILES},
        "binaries": {name: sha256_of(ROOT / name) for name in BINARIES},
        "load_average": load_average(),
        "limits": limits(),
        "runtimes": {rt.name: {"label": rt.label, "version": runtime_version(rt)} for rt in runtimes},
    }


def limits() -> dict[str, Any]:
    """What bounds how many connections a process holds and how fast they open: the
    descriptor limits (the harness's, which its children get with the soft one raised to
    the hard one: procs.raise_fd_limit), the ephemeral port range, the accept backlog's
    ceiling and the kernel's TCP memory (pages)."""
    import resource

    def sysctl(name: str) -> str | None:
        try:
            return (Path("/proc/sys") / name.replace(".", "/")).read_text().split("\n")[0].replace("\t", " ")
        except OSError:
            return None

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return {"rlimit_nofile": {"soft": soft, "hard": hard, "children": hard},
            "ip_local_port_range": sysctl("net.ipv4.ip_local_port_range"),
            "somaxconn": sysctl("net.core.somaxconn"), "tcp_mem": sysctl("net.ipv4.tcp_mem"),
            "fs_nr_open": sysctl("fs.nr_open"), "fs_file_max": sysctl("fs.file-max")}


def load_average() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def sha256_of(path: Path) -> str:
    """The file's sha256 (symlinks followed), or why there is none."""
    try:
        digest = hashlib.sha256()
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
        return digest.hexdigest()
    except OSError as exc:
        return f"unavailable ({exc.strerror})"


def cpu_governor() -> str:
    """The CPU frequency governor(s) in use, or why it cannot be read."""
    files = sorted(glob.glob("/sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor"))
    if not files:
        return "unavailable (no cpufreq in /sys: a VM or a kernel without frequency scaling)"
    values = set()
    for name in files:
        try:
            values.add(Path(name).read_text().strip())
        except OSError as exc:
            values.add(f"unreadable ({exc.strerror})")
    return ", ".join(sorted(values))


def runtime_version(rt: Runtime) -> str:
    if not rt.version_cmd:
        return "unknown (a server wsbench did not start)"
    try:
        out = subprocess.run(list(rt.version_cmd), cwd=ROOT, capture_output=True, text=True,
                             timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable ({type(exc).__name__})"
    text = (out.stdout or out.stderr).strip()
    if out.returncode != 0 or not text:
        return f"unavailable (exit {out.returncode})"
    return " ".join(text.splitlines()[0].split())


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _meminfo(key: str) -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _os_release() -> str:
    try:
        for line in Path("/etc/os-release").read_text().splitlines():
            if line.startswith("PRETTY_NAME="):
                return line.split("=", 1)[1].strip('"')
    except OSError:
        pass
    return platform.system()


def _git(*args: str) -> str | None:
    try:
        out = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.rstrip() if out.returncode == 0 else None
