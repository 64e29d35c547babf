"""Reports of a run: Markdown, self-contained HTML with charts, CSV and JSON
(``wsbench report``, ``make report``).

- table: the ranked Markdown tables of a run (printed by ``wsbench run`` and written beside
  its JSON), and the pieces of them the report reuses;
- model: derived figures (QuickJS scoreboard, geometric-mean scores, efficiency views);
- sources, claims: the source documents' published figures beside ours;
- document: the sections of a report, the same for every format;
- markdown, html (+ templates/, charts, visuals), csvfile, jsonfile: the formats;
- screenshot: the HTML opened in headless Chromium (console errors, charts' sizes, a PNG);
- history: the gate's trend over many commits (``wsbench history``), through the same
  sections, template and charts.
"""

from __future__ import annotations

from pathlib import Path

from ..doc import Section
from ..errors import WsbenchError
from ..model import Run

FORMATS = {"md": "results.md", "html": "index.html", "csv": "results.csv", "json": "results.json"}


def render_sections(title: str, source: str, facts: list[str], sections: list[Section], fmt: str) -> str:
    """Sections made elsewhere (e.g. ``wsbench compare``) as Markdown or HTML."""
    from . import document, markdown

    report = document.Report(title, source, facts, sections)
    if fmt == "html":
        from . import html

        return html.render(report)
    if fmt != "md":
        raise WsbenchError(f"unknown format '{fmt}' (known: md, html)")
    return markdown.render(report)


def render(run: Run, source: Path, fmt: str) -> str:
    """The report of ``run`` (read from ``source``) in one of FORMATS."""
    from . import csvfile, document, jsonfile, markdown

    if fmt not in FORMATS:
        raise WsbenchError(f"unknown format '{fmt}' (known: {', '.join(FORMATS)})")
    if fmt == "csv":
        return csvfile.render(run)
    report = document.build(run, source, with_charts=fmt == "html")
    if fmt == "html":
        from . import html  # matplotlib and jinja2 are imported only when HTML is asked for

        return html.render(report)
    return jsonfile.render(run, report) if fmt == "json" else markdown.render(report)
