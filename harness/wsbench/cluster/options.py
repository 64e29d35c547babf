"""The options of ``wsbench run`` for servers wsbench did not start and for load
generators on several hosts (cli.py declares the others): ``--target``, ``--target-pid``,
``--allow-remote``, ``--shard``, ``--cluster``, ``--server-worker``, ``--cluster-timeout``.
Declarations only: nothing here imports the engine."""

from __future__ import annotations

import argparse

DEFAULT_READY_TIMEOUT_S = 60.0


def add_arguments(run: argparse.ArgumentParser) -> None:
    run.add_argument("--target", action="append", metavar="[NAME=]ws://HOST:PORT/PATH",
                     help="measure a server wsbench did not start (repeatable), after the same verification; "
                          "NAME of a catalog server keeps its features; server CPU and RSS are n/a (external)")
    run.add_argument("--target-pid", action="append", metavar="[NAME=]PID",
                     help="read a target's CPU and RSS from this process on this machine (/proc/PID; with --cluster: "
                          "on the server's host)")
    run.add_argument("--allow-remote", action="store_true",
                     help="accept a --target that is not a loopback address (its figures include the network)")
    run.add_argument("--shard", metavar="I/N",
                     help="this run is shard I of N load generators run at the same time against one server "
                          "(recorded; combine the files with wsbench merge; docs/scaling.md)")
    run.add_argument("--cluster", metavar="ADDRESS",
                     help="one shard per load worker of a Dask cluster (tcp://HOST:PORT of its scheduler, or local:N "
                          "to start N local workers), behind one start barrier, merged into one run; needs --target "
                          "(docs/scaling.md)")
    run.add_argument("--server-worker", metavar="NAME|ADDRESS",
                     help="with --cluster: the worker on the server's host, which reads the server's CPU and RSS "
                          "(default: the worker whose host is the target's address)")
    run.add_argument("--cluster-timeout", type=float, default=DEFAULT_READY_TIMEOUT_S, metavar="S",
                     help=f"with --cluster: a shard not ready at the start barrier within S seconds fails the run "
                          f"(default {DEFAULT_READY_TIMEOUT_S:g})")
