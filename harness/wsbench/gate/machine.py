"""The machine a deterministic count was taken on.

Instruction counts are exact, but only for the same code on the same kind of machine:
glibc picks its memcpy, memchr, strlen... variants by the CPU's features, so another CPU
model or feature set runs other instructions; another compiler, libc or valgrind also
changes the count. A baseline records all of these, and the gate refuses (exit 2, with
the reason) to compare counts taken where any of them differs.
"""

from __future__ import annotations

import hashlib
import platform
import subprocess
from pathlib import Path
from typing import Any

# What must match between the baseline's machine and this one for counts to compare.
KEYS = ("cpu_model", "cpu_flags_sha256", "valgrind", "cc", "libc")


def fingerprint() -> dict[str, Any]:
    """This machine: CPU model and flags (their sha256, and the list), and the versions
    of valgrind, the C compiler and glibc."""
    model, flags = _cpuinfo()
    return {
        "cpu_model": model,
        "cpu_flags_sha256": hashlib.sha256(" ".join(sorted(flags)).encode()).hexdigest(),
        "cpu_flags": " ".join(sorted(flags)),
        "valgrind": first_line(["valgrind", "--version"]),
        "cc": first_line(["cc", "--version"]),
        "libc": " ".join(platform.libc_ver()),
        "kernel": platform.release(),
    }


def mismatch(baseline: dict[str, Any], here: dict[str, Any], keys: tuple[str, ...] = KEYS) -> str | None:
    """Why counts taken on ``baseline``'s machine do not compare with this one's, or None;
    ``keys``: what must match (x86-64's by default; gate/qemu.py has armhf's)."""
    diffs = []
    for key in keys:
        if baseline.get(key) != here.get(key):
            if key == "cpu_flags_sha256":
                a, b = set(str(baseline.get("cpu_flags", "")).split()), set(str(here.get("cpu_flags", "")).split())
                detail = f"flags only there: {' '.join(sorted(a - b)) or '-'}; only here: {' '.join(sorted(b - a)) or '-'}"
                diffs.append(f"CPU flags differ ({detail})")
            else:
                diffs.append(f"{key} is {here.get(key)!r} here, {baseline.get(key)!r} in the baseline")
    return "; ".join(diffs) or None


def _cpuinfo() -> tuple[str, list[str]]:
    model, flags = "unknown", []
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "model name" and model == "unknown":
                model = value.strip()
            elif key.strip() == "flags" and not flags:
                flags = value.split()
    except OSError:
        pass
    return model, flags


def first_line(argv: list[str]) -> str:
    try:
        out = subprocess.run(argv, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"unavailable ({type(exc).__name__})"
    text = (out.stdout or out.stderr).strip()
    return text.splitlines()[0].strip() if out.returncode == 0 and text else f"unavailable (exit {out.returncode})"
