"""The report as Markdown (results.md): the run's facts, then every section."""

from __future__ import annotations

from .document import Report


def render(report: Report) -> str:
    lines = [f"# {report.title}", "", f"Rendered from `{report.source}`.", ""]
    if report.facts:
        lines += [f"- {fact}" for fact in report.facts] + [""]
    for section in report.sections:
        lines += section.markdown()
    return "\n".join(lines).rstrip() + "\n"
