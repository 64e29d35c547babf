"""The armhf client counted under ``qemu-arm`` by wsbench's TCG plugin (scripts/qemu-count,
built by ``make setup-arm`` into ``build/arm/qemu-count/wsbench-count.so``), the way
gate/callgrind.py counts the x86-64 one: only the measured phase.

The plugin adds each translated block's instruction count to a counter every time the block
runs; the armhf ``wsbench_check.so`` (built with ``QEMU_MARK=1``) marks the phase where the
x86 build makes its callgrind client requests (``check.count()`` at GO and before the result
line: a ``getpid`` syscall with a magic pair, which the plugin's syscall callback reads), and
the plugin writes the phase's total to the file its ``out=`` argument names (``parse``).

``-singlestep`` (one guest instruction per translated block) makes the emulated client
about ten times slower, so that it is the slow side, as under callgrind, and finds the
server's echoes queued whole at every read: without it the count of a burst depended on
how many messages each read found (``qjs-armhf/frag4_4k`` 11,081 to 12,547 instructions
per message in three runs, ``bin_64k`` 75,229 to 76,297); with it three runs agreed within
0.01 %. The guest runs the same instructions either way.

What such a count depends on (``fingerprint``, ``KEYS``): QEMU's version (its translator
decides nothing about the guest's instructions, but its CPU model decides which variants
glibc picks), the plugin's source, the cross compiler, and the armhf sysroot's pins (its
libc); not the host's CPU.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path
from typing import Any

from ..errors import WsbenchError
from ..paths import ROOT
from .callgrind import Counter
from .cells import ARMHF_QJS
from .machine import first_line

SYSROOT = "build/arm/sysroot"
PLUGIN = "build/arm/qemu-count/wsbench-count.so"
PLUGIN_SOURCE = "scripts/qemu-count/count.c"
CHECKS = "build/arm/root/build/clients/wsbench_check.so"
MODULE = "build/arm/root/build/quickjs-websocket/lws.so"
PINS = "scripts/pins-arm.sh"
LINE = re.compile(r"^wsbench-qemu-count instructions=(\d+) phases=(\d+) open=([01]) all=(\d+)$")

# What must match between the baseline's armhf counts and this machine's.
KEYS = ("qemu", "plugin_source_sha256", "arm_cc", "arm_sysroot")


def wrap(out: Path) -> list[str]:
    return ["qemu-arm", "-singlestep", "-L", SYSROOT, "-plugin", f"{PLUGIN},out={out}"]


def parse(text: str, cell: str) -> int:
    """The counted phase's instructions from the plugin's file; WsbenchError when the phase
    was never marked (a wsbench_check.so built without QEMU_MARK) or never closed."""
    match = LINE.match(text.strip())
    if match is None:
        raise WsbenchError(f"gate cell {cell}: the plugin's file is not a count line: {text.strip()[:120]!r}")
    instructions, phases, still_open = int(match[1]), int(match[2]), match[3] == "1"
    if phases == 0 and not still_open:
        raise WsbenchError(f"gate cell {cell}: the client never marked its measured phase (was "
                           f"{CHECKS} built with QEMU_MARK=1? run: make setup-arm)")
    if still_open:
        raise WsbenchError(f"gate cell {cell}: the client switched counting on and never off")
    if instructions <= 0:
        raise WsbenchError(f"gate cell {cell}: the plugin counted no instruction in the measured phase")
    return instructions


def total(path: Path, cell: str) -> int:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise WsbenchError(f"gate cell {cell}: qemu-arm's plugin wrote no {path.name} ({exc.strerror})") from None
    return parse(text, cell)


QEMU = Counter("qemu-arm + wsbench-count.so", ".qemu-count", wrap, total)


def missing() -> str | None:
    """Why the armhf cells cannot be counted here (one line naming make setup-arm), or None."""
    if shutil.which("qemu-arm") is None:
        return "qemu-arm is not installed (run: make setup-arm)"
    for rel in (*ARMHF_QJS, PLUGIN, CHECKS, MODULE, SYSROOT):
        if not (ROOT / rel).exists():
            return f"{rel} is missing (run: make setup-arm)"
    return stale()


# the sources the armhf module is built from (quickjs-websocket/Makefile's, with the
# protocol room's header-only parts)
MODULE_SOURCES = ("quickjs-websocket/src", "wsproto")


def stale() -> str | None:
    """The armhf module older than a source it is built from: counting it would count the
    code as it was (make setup-arm rebuilds it; the x86 build is rebuilt by make setup)."""
    built = (ROOT / MODULE).stat().st_mtime
    newer = sorted(str(f.relative_to(ROOT)) for d in MODULE_SOURCES for f in (ROOT / d).glob("*.[ch]")
                   if f.stat().st_mtime > built)
    if newer:
        more = f" and {len(newer) - 1} more" if len(newer) > 1 else ""
        return f"{MODULE} is older than {newer[0]}{more} (run: make setup-arm)"
    return None


def fingerprint() -> dict[str, Any]:
    """What the armhf counts depend on (``KEYS``), and the binaries' sha256 for the record."""
    return {
        "arch": "armhf",
        "qemu": first_line(["qemu-arm", "--version"]),
        "plugin_source_sha256": _sha256(ROOT / PLUGIN_SOURCE),
        "arm_cc": first_line(["arm-linux-gnueabihf-gcc", "--version"]),
        "arm_sysroot": _pins(),
        "plugin": PLUGIN,
        "binaries_sha256": {rel: _sha256(ROOT / rel) for rel in (ARMHF_QJS[0], MODULE, CHECKS, PLUGIN)},
    }


def _pins() -> str:
    """The sysroot's pinned packages (scripts/pins-arm.sh's ARM_DEBS), one string."""
    try:
        text = (ROOT / PINS).read_text()
    except OSError:
        return "unavailable"
    block = re.search(r"ARM_DEBS=\(([^)]*)\)", text)
    return " ".join(block[1].split()) if block else "unavailable"


def _sha256(path: Path) -> str | None:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None

