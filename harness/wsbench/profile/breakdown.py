"""Where the time goes: the share of samples per category (classify.py) and the top self
frames, for one side of one profiled cell."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Iterable

from ..doc import Grid
from ..model import SideBreakdown, TopFrame
from .classify import CATEGORIES, classify, frame_label
from .stacks import Sample

TOP = 10


@dataclass
class Breakdown:
    samples: int = 0
    by_category: Counter[str] = field(default_factory=Counter)
    by_frame: Counter[str] = field(default_factory=Counter)
    frame_category: dict[str, str] = field(default_factory=dict)

    def shares(self) -> dict[str, float]:
        """Percent per category, every category present; the shares sum to 100 (or all
        are 0 when there is no sample)."""
        if not self.samples:
            return {c: 0.0 for c in CATEGORIES}
        return {c: 100.0 * self.by_category[c] / self.samples for c in CATEGORIES}

    def top(self, n: int = TOP) -> list[tuple[str, str, int, float]]:
        """(frame, category, samples, percent) of the ``n`` commonest self frames."""
        return [(f, self.frame_category[f], k, 100.0 * k / self.samples) for f, k in self.by_frame.most_common(n)]

    def record(self) -> SideBreakdown:
        """As the run's profiles section records it."""
        return SideBreakdown(self.samples, self.shares(), [TopFrame(f, c, k, p) for f, c, k, p in self.top()])


def build(samples: Iterable[Sample]) -> Breakdown:
    b = Breakdown()
    for sample in samples:
        leaf = sample.leaf
        category = classify(leaf)
        label = frame_label(leaf)
        b.samples += 1
        b.by_category[category] += 1
        b.by_frame[label] += 1
        b.frame_category[label] = category
    return b


def shares_grid(shares: dict[str, float]) -> Grid:
    grid = Grid(["where", "share of samples"], right={1})
    for c in CATEGORIES:
        grid.add([c, f"{shares.get(c, 0.0):.1f} %"])
    grid.add(["total", f"{sum(shares.values()):.1f} %"])
    return grid


def top_grid(top: list[TopFrame]) -> Grid:
    grid = Grid(["#", "self frame", "category", "samples", "share"], right={0, 3, 4})
    for i, t in enumerate(top, 1):
        grid.add([str(i), f"`{t.frame}`", t.category, str(t.samples), f"{t.percent:.1f} %"])
    return grid
