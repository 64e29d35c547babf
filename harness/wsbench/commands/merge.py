"""``wsbench merge``: the shards of one plan (``wsbench run --shard I/N``) as one run."""

from __future__ import annotations

import argparse
import sys

from .. import merge
from ..paths import relative
from ..report import printed
from ..model import read_json, write_json
from . import EXIT_FAILED, any_failure


def main(args: argparse.Namespace, argv: list[str]) -> int:
    merged = merge.merge([(f, read_json(f)) for f in args.files], argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(merged, args.out)
    markdown = printed(merged)
    args.out.with_suffix(".md").write_text(markdown)
    print(markdown)
    print(f"wsbench: merged {len(args.files)} shards into {relative(args.out)}", file=sys.stderr)
    return EXIT_FAILED if any_failure(merged) else 0
