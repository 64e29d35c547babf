"""The report as one self-contained HTML page (index.html): the same sections as the
Markdown, tables with factors coloured green (best) to red (10× or worse), and the
charts inlined as SVG. No script, no stylesheet or font from the network."""

from __future__ import annotations

import html
import math
import re
from typing import Any

import jinja2
from markupsafe import Markup

from ..doc import Bullets, Chart, Details, Grid, Report

WORST_SHADE = 10.0  # a factor from which the colour stays red

_env = jinja2.Environment(loader=jinja2.PackageLoader("wsbench.report", "templates"),
                          autoescape=jinja2.select_autoescape(["html", "j2"]), undefined=jinja2.StrictUndefined,
                          trim_blocks=True, lstrip_blocks=True)


def inline(text: str) -> Markup:
    """The Markdown inline syntax the sections use (bold, code, links) as HTML."""
    out = html.escape(text, quote=True)
    out = re.sub(r"`([^`]+)`", r"<code>\1</code>", out)
    out = re.sub(r"\*\*([^*]+)\*\*", r"<strong>\1</strong>", out)
    out = re.sub(r"\[([^\]]+)\]\(([^)\s]+)\)", r'<a href="\2">\1</a>', out)
    return Markup(out)


def shade(f: float | None) -> str:
    """A factor ≥ 1 as a background colour: green at 1, through yellow, red from WORST_SHADE."""
    if f is None or not math.isfinite(f):
        return ""
    t = min(max(math.log(max(f, 1.0)) / math.log(WORST_SHADE), 0.0), 1.0)
    return f"background-color: hsl({120 * (1 - t):.0f}, 65%, 78%)"


def kind(block: Any) -> str:
    if isinstance(block, Grid):
        return "grid"
    if isinstance(block, Bullets):
        return "bullets"
    if isinstance(block, Chart):
        return "chart"
    if isinstance(block, Details):
        return "details"
    return "paragraph"


_env.filters.update(inline=inline, shade=shade)
_env.globals.update(kind=kind, Markup=Markup)


class HtmlExporter:
    def render(self, report: Report) -> str:
        return _env.get_template("report.html.j2").render(report=report)


EXPORTER = HtmlExporter()
