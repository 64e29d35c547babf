"""A network namespace of the harness's own, for a cell whose peer must vanish (vanish.py):
made fresh, its loopback up, commands run inside it (``ip netns exec``), a firewall rule
inside it that drops one TCP port's packets both ways, and deleted on every path (the
context's exit, which Ctrl-C and SIGTERM reach as KeyboardInterrupt, and atexit).

Nothing here touches the root namespace's firewall: every iptables command runs inside
the namespace. The names are ``wsbench-vanish-<harness pid>-<n>``; one whose harness is no
longer running (killed by SIGKILL) is deleted by the next harness that makes one.
"""

from __future__ import annotations

import atexit
import itertools
import os
import re
import shutil
import tempfile
from pathlib import Path
from types import TracebackType

from . import procs
from .errors import WsbenchError
from .paths import ROOT

PREFIX = "wsbench-vanish-"
TOOL_TIMEOUT_S = 10.0
_made: set[str] = set()  # namespaces of this process not yet deleted
_numbers = itertools.count(1)


def unavailable() -> str | None:
    """Why this machine cannot make the namespace (not root, no ``ip`` or ``iptables``),
    or None."""
    if os.geteuid() != 0:
        return "needs root (ip netns add, iptables inside the namespace)"
    for tool in ("ip", "iptables"):
        if shutil.which(tool) is None:
            return f"needs {tool} (not found on PATH)"
    return None


def _tool(argv: list[str], what: str) -> str:
    """Run a short tool; its stdout, or WsbenchError naming ``what`` and its last words."""
    with tempfile.TemporaryDirectory(prefix="wsbench-netns-") as tmp:
        out, err = Path(tmp) / "out", Path(tmp) / "err"
        try:
            code = procs.run(argv, cwd=ROOT, timeout_s=TOOL_TIMEOUT_S, stdout_path=out, stderr_path=err)
        except (OSError, TimeoutError) as exc:
            raise WsbenchError(f"{what}: {exc}") from None
        if code != 0:
            said = err.read_text(errors="replace").strip().splitlines()
            raise WsbenchError(f"{what}: {' '.join(argv)} exited with {code}" + (f" ({said[-1]})" if said else ""))
        return out.read_text(errors="replace")


def _delete(name: str) -> str | None:
    """Delete namespace ``name`` (its sockets and firewall go with it); None, or why not."""
    try:
        _tool(["ip", "netns", "delete", name], f"deleting network namespace {name}")
    except WsbenchError as exc:
        return str(exc)
    _made.discard(name)
    return None


def _sweep_stale() -> None:
    """Delete the namespaces left by a harness that is no longer running."""
    listing = _tool(["ip", "netns", "list"], "listing network namespaces")
    for name in re.findall(rf"^({re.escape(PREFIX)}(\d+)-\d+)\b", listing, re.MULTILINE):
        pid = int(name[1])
        if pid != os.getpid() and not os.path.exists(f"/proc/{pid}"):
            _delete(name[0])


@atexit.register
def _delete_all() -> None:
    for name in list(_made):
        _delete(name)


class Namespace:
    """``with Namespace() as ns:`` a fresh namespace with its loopback up; deleted at the
    end of the block whatever happens in it."""

    def __init__(self) -> None:
        self.name = f"{PREFIX}{os.getpid()}-{next(_numbers)}"

    def __enter__(self) -> "Namespace":
        why = unavailable()
        if why:
            raise WsbenchError(f"a network namespace for a vanishing peer {why}")
        _sweep_stale()
        _tool(["ip", "netns", "add", self.name], f"making network namespace {self.name}")
        _made.add(self.name)
        try:
            _tool(["ip", "-n", self.name, "link", "set", "lo", "up"], f"{self.name}: loopback up")
        except BaseException:
            _delete(self.name)
            raise
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        problem = _delete(self.name)
        if problem and kind is None:
            raise WsbenchError(problem)

    def inside(self, argv: list[str] | tuple[str, ...]) -> list[str]:
        """``argv`` as a command run inside the namespace (``ip netns exec`` execs it: the
        process's PID is the command's own)."""
        return ["ip", "netns", "exec", self.name, *argv]

    def drop_port(self, port: int) -> None:
        """Drop every TCP segment to or from ``port`` where it arrives (INPUT): its sender
        sees a silent network, not a local error; one rule each way."""
        for way in ("--sport", "--dport"):
            _tool(self.inside(["iptables", "-w", "-A", "INPUT", "-p", "tcp", way, str(port), "-j", "DROP"]),
                  f"{self.name}: dropping port {port}")

    def dropped(self, port: int) -> dict[str, int]:
        """Segments dropped so far: ``to_port`` (sent towards ``port``: by the peer that did
        not vanish) and ``from_port`` (sent from it)."""
        listing = _tool(self.inside(["iptables", "-w", "-n", "-v", "-x", "-L", "INPUT"]),
                        f"{self.name}: reading the drop counters")
        counts = {"to_port": 0, "from_port": 0}
        for line in listing.splitlines():
            fields = line.split()
            if len(fields) < 2 or not fields[0].isdigit() or "DROP" not in fields:
                continue
            if f"dpt:{port}" in fields:
                counts["to_port"] += int(fields[0])
            elif f"spt:{port}" in fields:
                counts["from_port"] += int(fields[0])
        return counts
