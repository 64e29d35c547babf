"""``wsbench stability``: the spread per cell of saved runs, and whether they agree."""

from __future__ import annotations

import argparse

from .. import stability
from ..model import read_json


def main(args: argparse.Namespace, argv: list[str]) -> int:
    print(stability.render([(f, read_json(f)) for f in args.files]))
    return 0
