"""``wsbench footprint``: the QuickJS client's footprint on x86-64 and armhf (footprint.py:
file sizes stripped, the files mapped at start-up, start-up RSS), then the suite
``footprint`` (memory per held connection over ws:// and wss://), into one results file
whose report has the section "Footprint" (report/footprint.py)."""

from __future__ import annotations

import argparse

from .. import footprint_measure as footprint, runner
from ..catalog import load_catalog
from ..errors import WsbenchError
from ..model import now
from ..paths import ROOT, relative, report_files
from ..progress import Progress
from ..report import printed
from ..workloads import load_workloads
from . import EXIT_FAILED, any_failure, measure_and_record

SUITE = "footprint"


def main(args: argparse.Namespace, argv: list[str]) -> int:
    arches = args.arch or list(footprint.ARCHES)
    if args.runs < 1:
        raise WsbenchError("--runs must be at least 1")
    catalog = load_catalog(args.catalog)
    clients = [footprint.ARCHES[a].client for a in arches]
    request = runner.Request(suite=SUITE, client=clients, repetitions=args.repetitions,
                             workload=args.workload or None)
    plan, catalog = runner.plan(request, catalog, load_workloads(args.workloads_dir))
    files = report_files(args.out, "footprint")
    run = runner.new_run(plan, catalog, argv)
    progress = Progress(total=0, quiet=args.quiet)

    def measure() -> None:
        progress.note(f"wsbench footprint: {', '.join(arches)}: sizes and start-up memory; results: "
                      f"{relative(files.json)}")
        run.footprint = footprint.measure_all(catalog, arches, ROOT / "build" / "footprint", args.runs)
        for arch, error in run.footprint.failed():
            progress.note(f"! {arch}: {error}")
        if args.no_connections:
            run.cells = []
            run.complete, run.finished = True, now()
            return
        progress.note(f"wsbench footprint: suite {SUITE}, {plan.repetitions} repetitions")
        runner.execute(plan, run, args.out / "logs" / files.stamp, files.json, progress)

    measure_and_record(run, files, measure, printed)
    # an architecture whose client is not built here (make setup-arm) is n/a, not a failure
    unbuilt = {a for a in arches if (c := catalog.clients.get(footprint.ARCHES[a].client)) and c.unbuilt()}
    failed = [a for a, _ in (run.footprint.failed() if run.footprint else []) if a not in unbuilt]
    return EXIT_FAILED if any_failure(run) or failed else 0
