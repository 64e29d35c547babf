"""``wsbench stability``: the spread per cell of saved runs, and whether they agree."""

from __future__ import annotations

import argparse

from .. import stability
from ..model import read_json
from ..report import render


def main(args: argparse.Namespace, argv: list[str]) -> int:
    print(render(stability.document([(f, read_json(f)) for f in args.files]), "md"))
    return 0
