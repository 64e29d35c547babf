"""A document as data: sections of paragraphs, tables, bullet lists and charts.

The Markdown tables (report/ranked.py) and the report (report/) build what they show as
``Section``s; ``markdown()`` renders them here, report/html.py renders the same sections
as HTML (where a table cell's shade, a factor against the best, becomes its colour, and
where charts appear: Markdown leaves them out).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Union


@dataclass
class Grid:
    """A table: headers, rows of text, right-aligned columns, and per cell an optional
    shade (a factor ≥ 1 against the best)."""

    headers: list[str]
    right: set[int] = field(default_factory=set)
    rows: list[list[str]] = field(default_factory=list)
    shades: list[list[float | None]] = field(default_factory=list)

    def add(self, cells: list[str], shades: dict[int, float | None] | None = None) -> None:
        """A row; a row shorter than the headers is padded with empty cells."""
        padded = cells + [""] * (len(self.headers) - len(cells))
        self.rows.append(padded)
        self.shades.append([(shades or {}).get(i) for i in range(len(padded))])

    def markdown(self) -> list[str]:
        out = ["| " + " | ".join(self.headers) + " |",
               "|" + "|".join("---:" if i in self.right else "---" for i in range(len(self.headers))) + "|"]
        out += ["| " + " | ".join(escape(c) for c in row) + " |" for row in self.rows]
        return out


@dataclass(frozen=True)
class Bullets:
    items: list[str]


@dataclass(frozen=True)
class Chart:
    """An inline SVG (HTML only) and what it shows."""

    svg: str
    caption: str


Block = Union[str, Grid, Bullets, Chart]  # a str is a paragraph (Markdown inline syntax)


@dataclass
class Section:
    title: str
    blocks: list[Block] = field(default_factory=list)

    @property
    def anchor(self) -> str:
        return re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")

    def markdown(self, level: int = 2) -> list[str]:
        out = ["#" * level + " " + self.title, ""]
        for block in self.blocks:
            if isinstance(block, Grid):
                out += block.markdown() + [""]
            elif isinstance(block, Bullets):
                out += [f"- {item}" for item in block.items] + [""]
            elif isinstance(block, str):
                out += [block, ""]
        return out


def escape(text: str) -> str:
    """A cell's text made safe for a Markdown table."""
    return text.replace("|", "\\|")
