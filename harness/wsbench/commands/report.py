"""``wsbench report``: a saved run rendered as Markdown, HTML with charts, CSV or JSON
(report/), printed or written into a directory, the HTML optionally checked in headless
Chromium."""

from __future__ import annotations

import argparse
import sys

from .. import report
from ..errors import WsbenchError
from ..paths import relative
from ..model import read_json
from . import rendered, write_text


def main(args: argparse.Namespace, argv: list[str]) -> int:
    formats = [f.strip() for spec in (args.format or ["md"]) for f in spec.split(",") if f.strip()]
    for fmt in formats:
        if fmt not in report.FORMATS:
            raise WsbenchError(f"unknown format '{fmt}' (known: {', '.join(report.FORMATS)})")
    if args.screenshot and (args.out is None or "html" not in formats):
        raise WsbenchError("--screenshot needs -o DIR and the html format")
    run = read_json(args.file)
    if args.out is None:
        if len(formats) != 1:
            raise WsbenchError("several formats need -o DIR")
        print(rendered(lambda: report.run_report(run, args.file, formats[0]), args.file), end="")
        return 0
    for fmt in formats:
        text = rendered(lambda: report.run_report(run, args.file, fmt), args.file)
        write_text(args.out / report.FORMATS[fmt], text)
    if args.screenshot:
        from ..report.screenshot import check_page

        page = check_page(args.out / report.FORMATS["html"])
        flat = [size for size in page.charts if min(size) < 1]
        if page.console_errors or page.failed_requests or flat or (run.workloads and not page.charts):
            raise WsbenchError(f"{relative(page.screenshot)}: the page shows {len(page.console_errors)} console "
                               f"errors, {len(page.failed_requests)} failed requests, {len(page.charts)} charts "
                               f"({len(flat)} without a size)")
        print(f"wsbench: {relative(page.screenshot)}: {len(page.charts)} charts, no console errors", file=sys.stderr)
    return 0
