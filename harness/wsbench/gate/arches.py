"""What ``wsbench gate --arch NAME`` counts and how, one ``Arch`` per architecture, so that
the gate's core (invocation.py, deterministic.py) never asks which one it is:

- ``x86-64`` (the default): ``cells.CELLS`` under callgrind (gate/callgrind.py), the
  machine facts of gate/machine.py, both gates, ``--base`` possible;
- ``armhf``: ``cells.ARMHF_CELLS`` (``qjs-armhf/*``) under ``qemu-arm`` with the counting
  plugin (gate/qemu.py), qemu's facts instead of the host CPU's, the deterministic gate only
  (QEMU's wall-clock times say nothing of ARM hardware), no ``--base`` (base trees are not
  cross-built). Its counts live in the baseline's ``arches`` (schema 16).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Any, Callable

from ..errors import WsbenchError
from . import machine, qemu
from .builds import HEAD
from .callgrind import CALLGRIND, Counter
from .cells import ARMHF_CELLS, ARMHF_QJS, CELLS, Cell


@dataclass(frozen=True)
class Arch:
    name: str
    cells: tuple[Cell, ...]
    counter: Counter
    keys: tuple[str, ...]  # the machine facts that must match for counts to compare
    fingerprint: Callable[[], dict[str, Any]]
    missing: Callable[[], str | None]  # why it cannot count here (one line naming the make target)
    gates: tuple[str, ...]  # the gates that apply
    pairs: bool  # --base REF possible
    setup: str  # what builds what it counts
    qjs: tuple[str, ...]  # the QuickJS client's command line (wsbench count's cells)


def _x86_missing() -> str | None:
    if shutil.which("valgrind") is None:
        return "valgrind is not installed (run: make setup)"
    missing = HEAD.missing()
    return f"{missing} is missing (run: make setup)" if missing else None


X86_64 = Arch("x86-64", CELLS, CALLGRIND, machine.KEYS, machine.fingerprint, _x86_missing, ("deterministic", "wall"),
              True, "make setup", HEAD.qjs)
ARMHF = Arch("armhf", ARMHF_CELLS, qemu.QEMU, qemu.KEYS, qemu.fingerprint, qemu.missing, ("deterministic",), False,
             "make setup-arm", ARMHF_QJS)
ARCHES = {a.name: a for a in (X86_64, ARMHF)}
DEFAULT = X86_64.name


def get(name: str) -> Arch:
    arch = ARCHES.get(name)
    if arch is None:
        raise WsbenchError(f"unknown architecture '{name}' (known: {', '.join(ARCHES)})")
    return arch
