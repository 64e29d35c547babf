"""Reports: documents (doc.Report) built from results, rendered by one exporter per format
behind one interface (export.py: the registry).

- document: a run's report, the same sections for every format; the tables ``wsbench run``,
  ``conformance`` and ``merge`` print, and those of ``wsbench profile`` and ``startup``;
- ranked: the ranked tables per workload, the run's facts, failures, what the checks cost;
- derived: derived figures (QuickJS scoreboard, geometric-mean scores, efficiency views);
- capacity, tls, shards: the sections of those runs; compression: the deflate axis's facts
  line and the mark of each ranked row; sources, claims: the source
  documents' published figures beside ours;
- the exporters: markdown, html (+ templates/, charts, visuals), csvfile, jsonfile;
- screenshot: the HTML opened in headless Chromium (console errors, charts' sizes, a PNG);
- history: the gate's trend over many commits (``wsbench history``), through the same
  document, template and charts.

Sections made elsewhere (the conformance tables, the gate's findings, the profiles) are
rendered through the same exporters.
"""

from __future__ import annotations

from pathlib import Path

from ..doc import Report
from ..model import Run
from .export import REGISTRY, exporter

FORMATS = {name: f.filename for name, f in REGISTRY.items()}


def render(report: Report, fmt: str, allowed: tuple[str, ...] = tuple(REGISTRY)) -> str:
    """``report`` in format ``fmt`` (one of ``allowed``)."""
    return exporter(fmt, allowed).render(report)


def run_report(run: Run, source: Path, fmt: str) -> str:
    """The report of ``run`` (read from ``source``) in one of FORMATS."""
    from . import document

    chosen = exporter(fmt)
    return chosen.render(document.build(run, source, with_charts=REGISTRY[fmt].charts))


def printed(run: Run) -> str:
    """The tables ``wsbench run``, ``conformance`` and ``merge`` print and write beside the
    run file, as Markdown."""
    from . import document

    return render(document.printed(run), "md")


def printed_profile(run: Run) -> str:
    """What ``wsbench profile`` and ``wsbench startup`` print and write, as Markdown."""
    from . import document

    return render(document.printed_profile(run), "md")
