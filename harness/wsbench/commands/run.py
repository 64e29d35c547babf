"""``wsbench run``: measure servers x clients x workloads (runner.py), write the results
(JSON and Markdown) and print the ranked tables; with ``--cluster``, one shard per load
host of a Dask cluster against one ``--target``, merged (cluster/coordinator.py)."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace

from .. import runner
from ..catalog import load_catalog
from ..errors import WsbenchError
from ..paths import report_files, relative
from ..progress import Progress
from ..report import printed
from ..workloads import load_workloads
from . import EXIT_FAILED, any_failure, measure_and_record


def main(args: argparse.Namespace, argv: list[str]) -> int:
    request = runner.Request(suite=args.suite, workload=args.workload, runtime=args.runtime, server=args.server,
                             client=args.client, repetitions=args.repetitions, min_seconds=args.min_seconds,
                             pin=args.pin, verify=args.verify, target=args.target, target_pid=args.target_pid,
                             allow_remote=args.allow_remote, environment_from=args.environment_from,
                             shard=args.shard, tls=args.tls, tls_key=args.tls_key, deflate=args.deflate,
                             conformance=args.conformance, out=args.out)
    if args.cluster:
        return _cluster(args, argv, request)
    if args.server_worker:
        raise WsbenchError("--server-worker goes with --cluster")
    plan, catalog = runner.plan(request, load_catalog(args.catalog), load_workloads(args.workloads_dir))
    files = report_files(args.out, "run")
    run = runner.new_run(plan, catalog, argv)
    progress = Progress(total=0, quiet=args.quiet)
    progress.note(f"wsbench: {len(plan.servers)} servers x {len(plan.clients)} clients x {len(plan.workloads)} "
                  f"workloads, {plan.repetitions} repetitions; results: {relative(files.json)}")
    log_dir = args.out / "logs" / files.stamp
    measure_and_record(run, files, lambda: runner.execute(plan, run, log_dir, files.json, progress), printed)
    for record in run.servers.values():
        if record.target and record.status == "failed":
            print(f"wsbench: target {record.target} {record.error}", file=sys.stderr)
    return EXIT_FAILED if any_failure(run) else 0


def _cluster(args: argparse.Namespace, argv: list[str], request: runner.Request) -> int:
    """The plan of the run, measured on the cluster's load hosts; the merged run is the
    results file (and the shards' runs beside it); a barrier that was not released fails
    the run in one line, after the files are written."""
    from ..cluster import coordinator

    if args.conformance:
        raise WsbenchError("--conformance goes with a run on this host: a --cluster run records no conformance "
                           "summaries")
    plan, catalog = runner.plan(replace(request, target_pid=None, out=None), load_catalog(args.catalog),
                                load_workloads(args.workloads_dir))
    coordinator.check(request, args.cluster, plan.workloads)
    files = report_files(args.out, "run")
    progress = Progress(total=0, quiet=args.quiet)
    request_ = coordinator.Request(args.cluster, args.server_worker, args.cluster_timeout, args.target_pid)
    cluster = coordinator.ClusterRun(plan, catalog, argv, request_, files, args.out / "logs" / files.stamp, progress)
    try:
        cluster.open()
        progress.note(f"wsbench: {len(plan.clients)} clients x {len(plan.workloads)} workloads, {plan.repetitions} "
                      f"repetitions, {len(cluster.load)} shards each; results: {relative(files.json)} (shards: "
                      f"{relative(cluster.shards_dir)}/)")
        measure_and_record(cluster.merged, files, lambda: cluster.execute(files.json), printed)
    finally:
        cluster.close()
    if cluster.failure:
        raise WsbenchError(cluster.failure)
    return EXIT_FAILED if any_failure(cluster.merged) else 0
