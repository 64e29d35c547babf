"""``wsbench history DIR``: the trend of the gate over the results files in DIR (the
nightly's history, report/history.py) as one self-contained HTML page, optionally checked
in headless Chromium like the report."""

from __future__ import annotations

import argparse
import sys

from ..errors import WsbenchError
from ..paths import relative
from ..report import history, render
from . import write_text


def main(args: argparse.Namespace, argv: list[str]) -> int:
    if args.last_commit:
        commit = history.last_commit(args.dir)
        if commit:
            print(commit)
        return 0
    if args.screenshot and args.out is None:
        raise WsbenchError("--screenshot needs -o DIR")
    points = history.load(args.dir)
    page = render(history.build(points, relative(args.dir)), "html")
    if args.out is None:
        print(page, end="")
        return 0
    index = args.out / "index.html"
    write_text(index, page)
    if args.screenshot:
        from ..report.screenshot import check_page

        check = check_page(index, full_page=True)
        flat = [size for size in check.charts if min(size) < 1]
        if check.console_errors or check.failed_requests or flat or not check.charts:
            raise WsbenchError(f"{relative(check.screenshot)}: the page shows {len(check.console_errors)} console "
                               f"errors, {len(check.failed_requests)} failed requests, {len(check.charts)} charts "
                               f"({len(flat)} without a size)")
        print(f"wsbench: {relative(check.screenshot)}: {len(check.charts)} charts, no console errors, "
              f"{len(points)} commits", file=sys.stderr)
    return 0
