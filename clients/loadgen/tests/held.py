"""A wsbench-loadgen run under the harness's protocol (WSBENCH_HOLD=1, clients/README.md):
the test answers its barrier lines; the run must exit 0 once its stdin ends, and its
process group is killed if it lingers."""

from __future__ import annotations

import os
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

from testkit.background import kill_group, spawn

LOADGEN = Path(__file__).resolve().parents[3] / "build/bin/wsbench-loadgen"
HOLD = {**os.environ, "WSBENCH_HOLD": "1"}


@contextmanager
def held(args: list[str]) -> Iterator[Any]:
    proc = spawn([LOADGEN, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=HOLD)
    try:
        yield proc
        proc.stdin.close()
        assert proc.wait(timeout=10) == 0
    finally:
        if proc.poll() is None:
            kill_group(proc)


def answer(proc: Any, expect: str, line: str) -> None:
    """Read the line `expect`, then write `line`."""
    assert proc.stdout.readline().strip() == expect
    proc.stdin.write(line)
    proc.stdin.flush()
