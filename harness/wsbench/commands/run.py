"""``wsbench run``: measure servers x clients x workloads (runner.py), write the results
(JSON and Markdown) and print the ranked tables."""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields

from .. import runner
from ..catalog import load_catalog
from ..paths import report_files, relative
from ..progress import Progress
from ..report.table import render_markdown
from ..workloads import load_workloads
from . import EXIT_FAILED, any_failure, record_and_report


def main(args: argparse.Namespace, argv: list[str]) -> int:
    request = runner.Request(**{f.name: getattr(args, f.name) for f in fields(runner.Request)})
    plan, catalog = runner.plan(request, load_catalog(args.catalog), load_workloads(args.workloads_dir))
    files = report_files(args.out, "run")
    run = runner.new_run(plan, catalog, argv)
    progress = Progress(total=0, quiet=args.quiet)
    progress.note(f"wsbench: {len(plan.servers)} servers x {len(plan.clients)} clients x {len(plan.workloads)} "
                  f"workloads, {plan.repetitions} repetitions; results: {relative(files.json)}")
    record_and_report(lambda save: runner.execute(plan, run, args.out / "logs" / files.stamp, save, progress),
                      run, files, render_markdown)
    for record in run.servers.values():
        if record.target and record.status == "failed":
            print(f"wsbench: target {record.target} {record.error}", file=sys.stderr)
    return EXIT_FAILED if any_failure(run) else 0
