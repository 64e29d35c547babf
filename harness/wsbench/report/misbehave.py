"""When peers misbehave (issue 34; the suite ``misbehave``): one section, one part per
kind of misbehaviour, each part a module of its own that returns its blocks from the run
(nothing when the run holds none of its cells):

- slow consumers on ``/broadcast``: each server's policy and its memory growth;
- a client whose server stops reading: whether its ``bufferedAmount`` tells the truth;
- soak drift: memory and descriptors per connection cycle, fitted;
- reconnect storms and peers that vanish.

A run with no part's cells has no section."""

from __future__ import annotations

from typing import Callable

from ..doc import Block, Section
from ..model import Run
from . import misbehave_slow
from . import misbehave_back, misbehave_soak
from . import misbehave_storm

Part = Callable[[Run], list[Block]]

# Each part's module appends its function here (imported below, in the section's order).
PARTS: list[Part] = [
    misbehave_slow.blocks,
    misbehave_back.blocks,
    misbehave_soak.blocks,
    misbehave_storm.blocks,
]

INTRO = ("Peers that misbehave over time: subscribers that stop reading, servers that stop reading, clients "
         "that connect and close again and again, all of them at once, and peers that vanish. Every figure is "
         "read from the wire, from `/proc` or from the programs' own results, over a bounded run; a cell stopped "
         "by a limit says which.")


def sections(run: Run) -> list[Section]:
    blocks: list[Block] = []
    for part in PARTS:
        blocks += part(run)
    return [Section("When peers misbehave", [INTRO, *blocks])] if blocks else []
