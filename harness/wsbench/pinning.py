"""Optional core pinning (``wsbench run --pin``): client and server on separate cores.

The CPUs this process may use are split in two halves, the server on the upper half and
the client on the lower one (on 2 cores: client on one, server on the other). The mask is
set in the child between fork and exec, so every thread a runtime starts inherits it, and
what the kernel then reports (``Cpus_allowed_list``) is recorded with the run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from .errors import WsbenchError


@dataclass(frozen=True)
class Pinning:
    client: frozenset[int]
    server: frozenset[int]

    def to_json(self) -> dict[str, list[int]]:
        return {"client": sorted(self.client), "server": sorted(self.server)}


def plan() -> Pinning:
    """Split the CPUs available to this process between client and server."""
    cpus = sorted(os.sched_getaffinity(0))
    if len(cpus) < 2:
        raise WsbenchError(f"--pin needs at least 2 CPUs; this process may use only CPU {cpus[0]}")
    half = len(cpus) // 2
    return Pinning(client=frozenset(cpus[:half]), server=frozenset(cpus[half:]))


def allowed(pid: int) -> list[int] | None:
    """The CPUs the kernel lets ``pid`` run on (``Cpus_allowed_list``), or None."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("Cpus_allowed_list:"):
            return _parse_list(line.split(":", 1)[1].strip())
    return None


def _parse_list(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        if "-" in part:
            lo, hi = part.split("-")
            out.extend(range(int(lo), int(hi) + 1))
        elif part:
            out.append(int(part))
    return out
