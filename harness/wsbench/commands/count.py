"""``wsbench count``: instruction counts per message of the QuickJS client and its ablations
(gate/tally.py) on each architecture asked for, written as a results file whose ``counts``
section the report sets beside the claims (report/claims.py). ``--claims``: the cells the
claims table of the quickjs-websocket optimizations needs (report/sources.py: each claim's
workload with the optimized client and the one without the optimization); ``--run FILE``
carries that run's timed cells (an ablations run) into the file, so that one report shows
the msgs/s ratios and the instruction ratios side by side."""

from __future__ import annotations

import argparse

from ..catalog import Catalog, load_catalog
from ..environment import collect
from ..errors import WsbenchError
from ..gate import arches
from ..gate.tally import Target, tally
from ..model import InstructionCounts, read_json, write_json
from ..newrun import carrying
from ..paths import relative, report_files, time_stamp
from ..progress import Progress
from ..report import run_report
from ..report.sources import ALL_CLAIMS, SINGLE_CLAIMS
from ..workloads import WorkloadSet, load_workloads

COUNTED_METRICS = ("msgs_per_s", "handshakes_per_s")  # a claim measured per message (or per handshake)


def claim_targets(catalog: Catalog, workloads: WorkloadSet) -> list[Target]:
    """Per claim measured per message: its first workload that exists, with its optimized
    client and the one without the optimization; each pair once, in the claims' order."""
    out: dict[str, Target] = {}
    for claim in [*SINGLE_CLAIMS, *ALL_CLAIMS]:
        if claim.metric not in COUNTED_METRICS or not claim.workloads or not claim.theirs:
            continue
        workload = next((w for w in claim.workloads if w in workloads.workloads), None)
        if workload is None:
            continue
        for client in (claim.ours, claim.theirs):
            spec = catalog.clients.get(client)
            if spec is None:
                raise WsbenchError(f"client '{client}' (claim {claim.number}, {claim.switch}) is not in the catalog")
            target = Target(workload, client, tuple(sorted(spec.env.items())))
            out.setdefault(target.key, target)
    return list(out.values())


def main(args: argparse.Namespace, argv: list[str]) -> int:
    if not args.claims:
        raise WsbenchError("say what to count: --claims (the claims table's cells)")
    catalog, workloads = load_catalog(args.catalog), load_workloads(args.workloads_dir)
    chosen = [arches.get(a) for a in (args.arch or [arches.DEFAULT])]
    carried = read_json(args.run) if args.run else None
    targets = claim_targets(catalog, workloads)
    progress = Progress(total=0, quiet=args.quiet)
    stamp = time_stamp()
    files = report_files(args.out, "count", stamp)
    counted = {a.name: tally(a, targets, workloads, args.out / "count" / stamp, progress.note) for a in chosen}
    env = collect(catalog.runtimes[r] for r in sorted(catalog.runtimes))
    run = carrying(carried, argv, env, carried.settings if carried else {}, counts=InstructionCounts(counted))
    write_json(run, files.json)
    files.md.write_text(run_report(run, files.json, "md"))
    failed = sum(len(c.failed) for c in counted.values())
    print(f"wsbench count: {sum(len(c.cells) for c in counted.values())} cells counted, {failed} failed; "
          f"results: {relative(files.json)}")
    return 1 if failed else 0
