"""A document as data: a ``Report`` of ``Section``s of paragraphs, tables, bullet lists,
collapsible details and charts. Every format renders the same document (report/: one
exporter per format behind one interface, report/export.py); nothing here renders.

Where a table cell's shade (a factor against the best) or tone (a verdict) becomes a
colour, and where charts appear, is the exporter's choice: HTML shows them, Markdown
none.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Union

if TYPE_CHECKING:
    from .model import Run


@dataclass
class Grid:
    """A table: headers, rows of text, right-aligned columns, and per cell an optional
    shade (a factor ≥ 1 against the best) and an optional tone (a verdict's colour: one of
    ``TONES``)."""

    headers: list[str]
    right: set[int] = field(default_factory=set)
    rows: list[list[str]] = field(default_factory=list)
    shades: list[list[float | None]] = field(default_factory=list)
    tones: list[list[str | None]] = field(default_factory=list)

    def add(self, cells: list[str], shades: dict[int, float | None] | None = None,
            tones: dict[int, str] | None = None) -> None:
        """A row; a row shorter than the headers is padded with empty cells."""
        padded = cells + [""] * (len(self.headers) - len(cells))
        self.rows.append(padded)
        self.shades.append([(shades or {}).get(i) for i in range(len(padded))])
        self.tones.append([(tones or {}).get(i) for i in range(len(padded))])


TONES = ("ok", "non-strict", "failed", "info", "none")  # as Autobahn's index page colours its cases; none: not run


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Chart:
    """An inline SVG (HTML only) and what it shows."""

    svg: str
    caption: str


@dataclass(frozen=True)
class Details:
    """Blocks folded under a one-line summary (``<details>``), e.g. a long table below the
    rows that matter."""

    summary: str
    blocks: list["Block"]


Block = Union[str, Grid, Bullets, Chart, Details]  # a str is a paragraph (Markdown inline syntax)


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)
    level: int = 2  # the heading's level (1: a document of its own, e.g. a profiled cell's breakdown.md)

    @property
    def anchor(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")


@dataclass
class Report:
    """A document: a title (None: none), the file it was rendered from (None: not from a
    file, e.g. the tables ``wsbench run`` prints), facts (one line each), blocks before the
    first section, the sections; and the run it was made of, for the formats that read the
    measurements themselves (CSV, JSON)."""

    title: str | None
    source: str | None
    facts: list[str]
    sections: list[Section]
    intro: list[Block] = field(default_factory=list)
    run: "Run | None" = None
