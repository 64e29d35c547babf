"""``wsbench compare``: what changed between two saved runs, cell by cell (compare.py);
the exit code says which way."""

from __future__ import annotations

import argparse

from .. import compare, report
from ..doc import Report
from ..model import read_json
from . import rendered, write_text

FORMATS = ("md", "html")  # the report formats a comparison is rendered in


def main(args: argparse.Namespace, argv: list[str]) -> int:
    exporter = report.exporter(args.format, FORMATS)  # an unknown format fails before anything is read
    a, b = read_json(args.a), read_json(args.b)
    ra = rendered(lambda: compare.readings(a), args.a)
    rb = rendered(lambda: compare.readings(b), args.b)
    changes, drift = compare.judged(a, ra, rb, raw=args.raw)
    sections = compare.sections(a, b, (str(args.a), str(args.b)), changes, drift)
    text = exporter.render(Report("wsbench compare", f"{args.a} → {args.b}", [], sections))
    if args.out:
        write_text(args.out, text)
    else:
        print(text, end="")
    return compare.exit_code(changes)
