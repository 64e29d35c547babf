"""``wsbench compare``: what changed between two saved runs, cell by cell (compare.py);
the exit code says which way."""

from __future__ import annotations

import argparse

from .. import compare, report
from ..errors import WsbenchError
from ..model import read_json
from . import rendered, write_text


def main(args: argparse.Namespace, argv: list[str]) -> int:
    if args.format not in ("md", "html"):
        raise WsbenchError(f"unknown format '{args.format}' (known: md, html)")
    a, b = read_json(args.a), read_json(args.b)
    ra = rendered(lambda: compare.readings(a), args.a)
    rb = rendered(lambda: compare.readings(b), args.b)
    changes, drift = compare.judged(a, ra, rb, raw=args.raw)
    sections = compare.sections(a, b, (str(args.a), str(args.b)), changes, drift)
    text = report.render_sections("wsbench compare", f"{args.a} → {args.b}", [], sections, args.format)
    if args.out:
        write_text(args.out, text)
    else:
        print(text, end="")
    return compare.exit_code(changes)
