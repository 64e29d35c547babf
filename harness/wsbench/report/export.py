"""One interface for every export format: an ``Exporter`` renders a report (doc.Report)
to text. The registry names each format as ``--format`` does, the file ``-o DIR`` writes it
to, and the module of this package whose ``EXPORTER`` renders it: a module is imported only
when its format is asked for (the HTML's jinja2 and matplotlib are never loaded for
Markdown). A new format is one more module and one more line in ``REGISTRY``."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Protocol

from ..doc import Report
from ..errors import WsbenchError


class Exporter(Protocol):
    def render(self, report: Report) -> str:
        """The report in this format."""


@dataclass(frozen=True)
class Format:
    name: str  # as --format names it
    filename: str  # what -o DIR writes it to
    module: str  # report/<module>.py, whose EXPORTER renders it
    charts: bool = False  # the report it renders carries charts (drawn with matplotlib)


REGISTRY: dict[str, Format] = {f.name: f for f in (
    Format("md", "results.md", "markdown"),
    Format("html", "index.html", "html", charts=True),
    Format("csv", "results.csv", "csvfile"),
    Format("json", "results.json", "jsonfile"),
)}


def known(names: tuple[str, ...] = tuple(REGISTRY)) -> str:
    return ", ".join(names)


def exporter(name: str, allowed: tuple[str, ...] = tuple(REGISTRY)) -> Exporter:
    """The exporter of format ``name`` (one of ``allowed``: a command may offer fewer)."""
    if name not in allowed or name not in REGISTRY:
        raise WsbenchError(f"unknown format '{name}' (known: {known(allowed)})")
    module = importlib.import_module(f"{__package__}.{REGISTRY[name].module}")
    return module.EXPORTER  # type: ignore[no-any-return]
