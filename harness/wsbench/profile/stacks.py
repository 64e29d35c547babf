"""Samples from ``perf script`` text: each sample's frames, leaf first, as (symbol, DSO).

The default ``perf script`` output of a ``-g`` recording is, per sample, a header line
(``comm pid/tid time: period event:``) and one indented line per frame
(``addr symbol+offset (dso)``), then an empty line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

FRAME = re.compile(r"^\s+([0-9a-f]+)\s+(.*?)\s+\((.*)\)\s*$")
OFFSET = re.compile(r"\+0x[0-9a-f]+$")


@dataclass(frozen=True)
class Frame:
    symbol: str  # without +offset; "[unknown]" when perf could not name it
    dso: str  # the file (or [kernel.kallsyms], [vdso], /tmp/perf-PID.map, [unknown])


@dataclass(frozen=True)
class Sample:
    comm: str
    frames: tuple[Frame, ...]  # leaf (the self frame) first

    @property
    def leaf(self) -> Frame:
        return self.frames[0] if self.frames else Frame("[unknown]", "[unknown]")


def parse_frame(line: str) -> Frame | None:
    m = FRAME.match(line)
    if not m:
        return None
    return Frame(OFFSET.sub("", m.group(2)) or "[unknown]", m.group(3))


def samples(lines: Iterable[str]) -> Iterator[Sample]:
    comm: str | None = None
    frames: list[Frame] = []
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            if comm is not None:
                yield Sample(comm, tuple(frames))
            comm, frames = None, []
            continue
        if not line[0].isspace():
            if comm is not None:
                yield Sample(comm, tuple(frames))
            comm, frames = line.split(None, 1)[0] if line.split() else "?", []
            continue
        frame = parse_frame(line)
        if frame is not None and comm is not None:
            frames.append(frame)
    if comm is not None:
        yield Sample(comm, tuple(frames))


def read(path: Path) -> Iterator[Sample]:
    with path.open(errors="replace") as f:
        yield from samples(f)
