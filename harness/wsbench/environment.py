"""The machine and software a run was measured on, recorded with every result."""

from __future__ import annotations

import os
import platform
import subprocess
from pathlib import Path
from typing import Any, Iterable

from . import __version__
from .catalog import Runtime
from .paths import ROOT


def collect(runtimes: Iterable[Runtime]) -> dict[str, Any]:
    return {
        "cpu_model": _cpu_model(),
        "logical_cpus": os.cpu_count(),
        "memory_total_kib": _meminfo("MemTotal"),
        "kernel": platform.release(),
        "os": _os_release(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "wsbench": __version__,
        "git_commit": _git("rev-parse", "HEAD"),
        "git_dirty": bool(_git("status", "--porcelain", "--untracked-files=no")),
        "load_average": list(os.getloadavg()),
        "runtimes": {rt.name: {"label": rt.label, "version": runtime_version(rt)} for rt in runtimes},
    }


def runtime_version(rt: Runtime) -> str:
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
    return out.stdout.strip() if out.returncode == 0 else None
