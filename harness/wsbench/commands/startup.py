"""``wsbench startup``: start-up time of clients and servers with hyperfine
(profile/hyperfine.py), into a results file of its own."""

from __future__ import annotations

import argparse

from ..catalog import load_catalog
from ..errors import WsbenchError
from ..model import now
from ..paths import PROFILES_DIR, report_files
from ..profile import profiling, tools
from ..progress import Progress
from ..report import printed_profile
from . import EXIT_FAILED, measure_and_record


def main(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    clients, servers = profiling.startup_programs(catalog, args.client, args.server)
    if args.warmup < 0 or args.runs < 2:
        raise WsbenchError("--warmup must be at least 0 and --runs at least 2")
    tools.require("hyperfine")
    files = report_files(args.reports, "startup")
    run = profiling.new_run(catalog, [], clients, servers, argv, {"min_seconds": 0.0, "verify": "on", "pinning": None})
    progress = Progress(total=0, quiet=args.quiet)

    def measure() -> None:
        try:
            profiling.startup_all(run, catalog, clients, servers, args.warmup, args.runs,
                                  PROFILES_DIR / files.stamp / "startup", progress.note, files.json)
            run.complete = True
        finally:
            run.finished = now()

    measure_and_record(run, files, measure, printed_profile)
    return EXIT_FAILED if run.startup and run.startup.failed() else 0
