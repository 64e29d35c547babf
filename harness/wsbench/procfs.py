"""Readings of a live process: CPU time and peak resident memory.

CPU time comes from the process's CPU-time clock (``clock_gettime`` on the clock id
Linux derives from a PID): nanosecond resolution, and the whole thread group — threads
that have already exited included — exactly what ``getrusage`` reports at exit.
Peak memory is VmHWM from ``/proc/PID/status``, current memory VmRSS; the descriptor
limit a process runs under comes from ``/proc/PID/limits``, the descriptors it has open
from ``/proc/PID/fd``.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

_CPUCLOCK_SCHED = 2  # Linux: (~pid << 3) | CPUCLOCK_SCHED names the process's CPU clock


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def process_cpu_ns(pid: int) -> int | None:
    """Total CPU time (user + system) of the thread group ``pid``, in nanoseconds."""
    try:
        return time.clock_gettime_ns(((~pid) << 3) | _CPUCLOCK_SCHED)
    except (OSError, OverflowError):  # no such process (or not a possible PID)
        return None


def running(pid: int) -> bool:
    """True while ``pid`` exists and is neither a zombie nor dead."""
    text = _read(Path(f"/proc/{pid}/stat"))
    return text is not None and text[text.rindex(")") + 2] not in "ZXx"


def _status_kib(pid: int, key: str) -> int | None:
    text = _read(Path(f"/proc/{pid}/status"))
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith(key):
            return int(line.split()[1])
    return None


def peak_rss_kib(pid: int) -> int | None:
    """VmHWM: the peak resident set size since start or the last reset, in KiB."""
    return _status_kib(pid, "VmHWM:")


def rss_kib(pid: int) -> int | None:
    """VmRSS: the resident set size now, in KiB."""
    return _status_kib(pid, "VmRSS:")


def fd_count(pid: int) -> int | None:
    """The descriptors ``pid`` has open now (the entries of /proc/PID/fd), or None."""
    try:
        return len(os.listdir(f"/proc/{pid}/fd"))
    except OSError:
        return None


def fd_limit(pid: int) -> tuple[int, int] | None:
    """The soft and hard RLIMIT_NOFILE of ``pid`` ("Max open files" of /proc/PID/limits)."""
    text = _read(Path(f"/proc/{pid}/limits"))
    for line in (text or "").splitlines():
        if line.startswith("Max open files"):
            soft, hard = line.split()[3:5]
            return (int(soft) if soft.isdigit() else -1, int(hard) if hard.isdigit() else -1)
    return None


def reset_peak_rss(pid: int) -> str | None:
    """Reset VmHWM to the current RSS (Linux >= 4.0). Returns None, or why it failed."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
    except OSError as exc:
        return f"cannot reset the peak RSS of process {pid} (/proc/{pid}/clear_refs: {exc.strerror or exc})"
    return None
