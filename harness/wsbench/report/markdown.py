"""The Markdown exporter (results.md, the tables ``wsbench run`` prints, a gate report,
a profiled cell's breakdown.md): the title, the file it was rendered from, the facts, then
every block of every section. Charts are left out; a table cell's shade is not shown."""

from __future__ import annotations

from ..doc import Block, Bullets, Details, Grid, Report, Section


class MarkdownExporter:
    def render(self, report: Report) -> str:
        lines: list[str] = []
        if report.title is not None:
            lines += [f"# {report.title}", ""]
        if report.source is not None:
            lines += [f"Rendered from `{report.source}`.", ""]
        if report.facts:
            lines += [f"- {fact}" for fact in report.facts] + [""]
        lines += blocks(report.intro)
        for section in report.sections:
            lines += section_lines(section)
        return "\n".join(lines).rstrip() + "\n"


EXPORTER = MarkdownExporter()


def section_lines(section: Section) -> list[str]:
    return ["#" * section.level + " " + section.title, "", *blocks(section.blocks)]


def blocks(items: list[Block]) -> list[str]:
    """Each block followed by an empty line (charts have no Markdown form)."""
    out: list[str] = []
    for block in items:
        if isinstance(block, Grid):
            out += table(block) + [""]
        elif isinstance(block, Bullets):
            out += [f"- {item}" for item in block.items] + [""]
        elif isinstance(block, Details):
            out += [f"<details><summary>{block.summary}</summary>", "", *blocks(block.blocks), "</details>", ""]
        elif isinstance(block, str):
            out += [block, ""]
    return out


def table(grid: Grid) -> list[str]:
    out = ["| " + " | ".join(grid.headers) + " |",
           "|" + "|".join("---:" if i in grid.right else "---" for i in range(len(grid.headers))) + "|"]
    out += ["| " + " | ".join(escape(c) for c in row) + " |" for row in grid.rows]
    return out


def escape(text: str) -> str:
    """A cell's text made safe for a Markdown table."""
    return text.replace("|", "\\|")
