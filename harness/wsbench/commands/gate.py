"""``wsbench gate``: the regression gate (gate/): exit 0 pass, 1 regression, 2 cannot run."""

from __future__ import annotations

import argparse

from ..catalog import load_catalog
from ..gate import invocation
from ..workloads import load_workloads


def main(args: argparse.Namespace, argv: list[str]) -> int:
    opts = invocation.Options(baseline=args.baseline, update=args.update, only=args.only, quick=args.quick,
                           cells=args.cell, calibrate=args.calibrate, wall_run=args.wall_run,
                           out=args.out, quiet=args.quiet, base=args.base, head=args.head, summary=args.summary,
                           wall_workloads=args.wall_workload, wall_repetitions=args.wall_repetitions,
                           arch=args.arch)
    return invocation.run(opts, load_catalog(args.catalog), load_workloads(args.workloads_dir), argv)
