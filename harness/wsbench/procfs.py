"""Readings of a live process from /proc: CPU time and peak resident memory.

Two CPU clocks are used, each where it is the more precise:
- ``thread_cpu_ns`` sums every live thread's run time from ``/proc/PID/task/*/schedstat``
  (nanoseconds). Right for a long-lived server whose threads outlive the sample window.
- ``process_cpu_s`` is utime+stime of the whole thread group from ``/proc/PID/stat``
  (clock ticks, 10 ms here), which also counts threads that have already exited, and so
  is comparable with the ``rusage`` the kernel reports when the process is reaped.
"""

from __future__ import annotations

import os
from pathlib import Path

CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def _read(path: Path) -> str | None:
    try:
        return path.read_text()
    except (FileNotFoundError, ProcessLookupError, PermissionError):
        return None


def process_cpu_s(pid: int) -> float | None:
    """utime + stime of the thread group, in seconds (tick resolution)."""
    text = _read(Path(f"/proc/{pid}/stat"))
    if text is None:
        return None
    # The command name may contain spaces; fields after the closing parenthesis are fixed.
    fields = text[text.rindex(")") + 2:].split()
    utime, stime = int(fields[11]), int(fields[12])
    return (utime + stime) / CLOCK_TICKS


def running(pid: int) -> bool:
    """True while ``pid`` exists and is neither a zombie nor dead."""
    text = _read(Path(f"/proc/{pid}/stat"))
    return text is not None and text[text.rindex(")") + 2] not in "ZXx"


def thread_cpu_ns(pid: int) -> int | None:
    """Sum of the run time of every live thread of ``pid``, in nanoseconds."""
    task_dir = Path(f"/proc/{pid}/task")
    try:
        tids = os.listdir(task_dir)
    except (FileNotFoundError, ProcessLookupError):
        return None
    total = 0
    for tid in tids:
        text = _read(task_dir / tid / "schedstat")
        if text:
            total += int(text.split()[0])
    return total


def peak_rss_kib(pid: int) -> int | None:
    """VmHWM: the peak resident set size since start or the last reset, in KiB."""
    text = _read(Path(f"/proc/{pid}/status"))
    if text is None:
        return None
    for line in text.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return None


def reset_peak_rss(pid: int) -> bool:
    """Reset VmHWM to the current RSS (Linux >= 4.0). Returns False if not possible."""
    try:
        Path(f"/proc/{pid}/clear_refs").write_text("5")
        return True
    except OSError:
        return False
