"""``wsbench docker``: the containers (docker/).

- ``wsbench docker bench [--build-only] [-- RUN-ARGS ...]``: the suite with the servers in
  containers (``make bench-docker``; ``make docker-images`` with ``--build-only``);
- ``wsbench docker engine run -- CMD ...``: a private engine up, CMD with DOCKER_HOST set,
  the engine down (``make docker-base``);
- ``wsbench docker engine check``: whether an engine can be started here (exit 0 or 1,
  one line).

Errors and Ctrl-C end in the CLI like every other command's, with the prefix ``PROG``.
"""

from __future__ import annotations

import argparse

from ..docker import bench, dockerd
from ..errors import WsbenchError

PROG = "wsbench docker"
INTERRUPTED = {"bench": "containers removed, engine stopped", "engine": "engine stopped"}


def main(args: argparse.Namespace, argv: list[str]) -> int:
    if args.docker_command == "bench":
        run_args = args.run_args[1:] if args.run_args[:1] == ["--"] else args.run_args
        return bench.bench(run_args or ["--suite", "quick"], args.build_only)
    if args.engine_command == "check":
        why = dockerd.unavailable()
        print(f"docker engine: {'can be started' if why is None else 'unavailable: ' + why}")
        return 0 if why is None else 1
    if args.command_line[:1] != ["--"] or len(args.command_line) < 2:
        raise WsbenchError("usage: wsbench docker engine run -- CMD ...")
    return dockerd.run_command(args.command_line[1:])


def interrupted(args: argparse.Namespace) -> str:
    """What the interrupt message adds: what was taken down."""
    return INTERRUPTED[args.docker_command]
