"""make test-stress: the tests that ever flaked, N times under a CPU hog on every core.

The hog is one busy shell loop per core, all in one process group of their own, killed
whatever happens (success, failure, Ctrl-C, SIGTERM). Each round runs pytest once over the
selection (its own process group too, with make test's 900 s limit per test) and reads
its JUnit XML; the table gives every test id with its failures out of N. Exit 0 when every
test passed in every round, 1 otherwise.

    .venv/bin/python scripts/stress.py [-n N] [TEST ...]
"""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PYTHON = ROOT / ".venv" / "bin" / "python"

# every test that ever failed only now and then, and the TLS, capacity and cluster tests
FLAKED = (
    "quickjs-websocket/tests/test_hostile.py::test_failed_connection_close_frame_reaches_the_peer",
    "quickjs-websocket/tests/test_websocket.py::test_kept_output_blocks_bounded_and_released_when_idle",
    "quickjs-websocket/tests/test_tls.py",
    "servers/tests/test_tls_servers.py",
    "harness/tests/test_tls_track.py",
    "harness/tests/test_conformance_tls.py",
    "clients/tests/test_tls_clients.py",
    "harness/tests/test_capacity_harness.py",
    "harness/tests/test_cluster.py",
    "harness/tests/test_profile.py",
    "clients/loadgen/tests/test_loadgen.py::test_the_start_barrier_holds_the_clock_until_go",
    "harness/tests/test_soak_drift.py",
)


class Stopped(Exception):
    """SIGTERM: end like Ctrl-C."""


def _stopped(signum: int, frame: object) -> None:
    raise Stopped()


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


@contextmanager
def cpu_hog() -> Iterator[None]:
    """A busy loop per core, in one process group, killed on the way out."""
    cores = os.cpu_count() or 1
    loop = ["sh", "-c", "while :; do :; done"]
    first = subprocess.Popen(loop, process_group=0)  # a group of its own (the others join it)
    others: list[subprocess.Popen[bytes]] = []
    try:
        others = [subprocess.Popen(loop, process_group=first.pid) for _ in range(cores - 1)]
        yield
    finally:
        _kill_group(first)
        for proc in others:
            proc.wait()


def run_once(tests: list[str], junit: Path) -> dict[str, str]:
    """One pytest run of ``tests``: each test id's outcome (passed, failed, skipped)."""
    # (--rootdir: test ids from the repository's root; xunit1: each test's file)
    argv = [str(PYTHON), "-m", "pytest", "-q", "-p", "no:cacheprovider", "--timeout=900", f"--rootdir={ROOT}",
            "-o", "junit_family=xunit1", f"--junitxml={junit}", *tests]
    proc = subprocess.Popen(argv, cwd=ROOT, start_new_session=True)
    try:
        proc.wait()
    finally:
        _kill_group(proc)
    return outcomes(junit) if junit.exists() else {}


def outcomes(junit: Path) -> dict[str, str]:
    found: dict[str, str] = {}
    for case in ET.parse(junit).iter("testcase"):
        test_id = f"{case.get('file')}::{case.get('name')}"
        kinds = {child.tag for child in case}
        found[test_id] = ("failed" if kinds & {"failure", "error"} else
                          "skipped" if "skipped" in kinds else "passed")
    return found


def table(runs: list[dict[str, str]]) -> tuple[str, int]:
    """The table (test id, failures out of N, skips) and how many tests failed at least once."""
    ids = sorted({test_id for run in runs for test_id in run})
    n = len(runs)
    lines = [f"| test | failures of {n} | skipped |", "|---|---:|---:|"]
    failing = 0
    for test_id in ids:
        # a test missing from a round's report (its pytest run died) counts as failed there
        failed = sum(1 for run in runs if run.get(test_id, "failed") == "failed")
        skipped = sum(1 for run in runs if run.get(test_id) == "skipped")
        failing += failed > 0
        lines.append(f"| {test_id} | {failed} of {n} | {skipped} |")
    return "\n".join(lines), failing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", "--runs", type=int, default=5)
    parser.add_argument("tests", nargs="*", default=list(FLAKED))
    args = parser.parse_args()
    signal.signal(signal.SIGTERM, _stopped)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # (even when started with SIGINT ignored)
    runs: list[dict[str, str]] = []
    try:
        with tempfile.TemporaryDirectory(prefix="wsbench-stress-") as tmp, cpu_hog():
            for i in range(args.runs):
                print(f"stress: round {i + 1} of {args.runs} under a CPU hog on {os.cpu_count()} cores", flush=True)
                runs.append(run_once(args.tests, Path(tmp) / f"round-{i}.xml"))
    except (KeyboardInterrupt, Stopped):
        print(f"stress: stopped after {len(runs)} complete rounds", file=sys.stderr)
    if not runs:
        return 1
    text, failing = table(runs)
    print(text)
    print(f"stress: {failing} of {len(text.splitlines()) - 2} tests failed at least once in {len(runs)} rounds")
    return 1 if failing or len(runs) < args.runs else 0


if __name__ == "__main__":
    sys.exit(main())
