"""What a qemu-user process (``qemu-arm`` running an armhf program, docs/arm.md) holds for
its guest, read from ``/proc/PID/smaps``.

qemu-user runs a 32-bit guest inside its own process: it reserves the guest's whole
address space (4 GiB, less the pages below ``vm.mmap_min_addr``) as one block at start and
maps every guest page inside it (the guest's program, libraries, heap, stack), while its
own code, heap and translation cache lie outside. So the resident pages of the mappings
inside that block are the guest's own (what an ARM process would have resident, to the
page), and everything else is the emulator's. The block is found as the run of adjacent
mappings whose span is that of a 32-bit address space; a process without exactly one such
run is not a 32-bit qemu-user guest, and has no guest figure.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

GUEST_SPAN_MIN = 2 ** 32 - 2 ** 24  # (the reservation starts above vm.mmap_min_addr, at most 16 MiB in)
GUEST_SPAN_MAX = 2 ** 32
_HEADER = re.compile(r"^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$")


@dataclass(frozen=True)
class Mapping:
    start: int
    end: int
    perms: str
    path: str  # "" for anonymous memory, "[heap]" and the like for the kernel's names
    rss_kib: int


def parse_smaps(text: str) -> list[Mapping]:
    """The mappings of a ``/proc/PID/smaps`` text, with their resident KiB."""
    out: list[Mapping] = []
    head: tuple[int, int, str, str] | None = None
    rss = 0
    for line in text.splitlines():
        m = _HEADER.match(line)
        if m:
            if head is not None:
                out.append(Mapping(*head, rss))
            head, rss = (int(m[1], 16), int(m[2], 16), m[3], m[4].strip()), 0
        elif line.startswith("Rss:") and head is not None:
            rss = int(line.split()[1])
    if head is not None:
        out.append(Mapping(*head, rss))
    return out


def guest_block(maps: list[Mapping]) -> list[Mapping] | None:
    """The mappings of the guest's address space: the one run of adjacent mappings whose
    span is a 32-bit address space; None when there is no such run, or more than one."""
    runs: list[list[Mapping]] = []
    for m in maps:
        if runs and runs[-1][-1].end == m.start:
            runs[-1].append(m)
        else:
            runs.append([m])
    found = [r for r in runs if GUEST_SPAN_MIN <= r[-1].end - r[0].start <= GUEST_SPAN_MAX]
    return found[0] if len(found) == 1 else None


def emulated(pid: int) -> bool:
    """Whether ``pid`` runs a qemu-user emulator (its executable is qemu-<arch>)."""
    try:
        return Path(os.readlink(f"/proc/{pid}/exe")).name.startswith("qemu-")
    except OSError:
        return False


def _maps(pid: int) -> list[Mapping] | None:
    try:
        return parse_smaps(Path(f"/proc/{pid}/smaps").read_text())
    except (OSError, ValueError):
        return None


def guest_rss_kib(pid: int) -> int | None:
    """The resident KiB of the guest's own pages of the qemu-user process ``pid``; None
    for a process that is not one (or is gone)."""
    if not emulated(pid):
        return None
    maps = _maps(pid)
    block = guest_block(maps) if maps is not None else None
    return None if block is None else sum(m.rss_kib for m in block)


def guest_files(pid: int) -> list[str] | None:
    """The files the guest of qemu-user process ``pid`` has mapped (its program and shared
    libraries, as host paths), in address order without repeats; None as for guest_rss_kib."""
    if not emulated(pid):
        return None
    maps = _maps(pid)
    block = guest_block(maps) if maps is not None else None
    return None if block is None else _files(block)


def mapped_files(pid: int) -> list[str] | None:
    """The files process ``pid`` has mapped (a native process: its program and libraries)."""
    maps = _maps(pid)
    return None if maps is None else _files(maps)


def _files(maps: list[Mapping]) -> list[str]:
    seen: dict[str, None] = {}
    for m in maps:
        if m.path.startswith("/") and not m.path.endswith(" (deleted)"):
            seen.setdefault(m.path, None)
    return list(seen)
