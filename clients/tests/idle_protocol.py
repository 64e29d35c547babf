"""The harness's barrier protocol as a client's idle run meets it (WSBENCH_HOLD=1:
harness/wsbench/hold.py), for the clients room's tests: GO at WSBENCH-START, a line at
WSBENCH-MARK, end of file after the result line."""

from __future__ import annotations

import subprocess
from typing import Callable

from testkit.background import kill_group, spawn
from wsbench.paths import ROOT


def drive_held(argv: list[str], env: dict[str, str], mark_line: str | None = "readings taken\n",
               at_mark: Callable[[], object] | None = None) -> tuple[int, list[str]]:
    """Run ``argv`` with ``env`` (WSBENCH_HOLD=1 added): GO at the start barrier; at the mark
    ``at_mark()`` first, then ``mark_line`` (None: end of file there); end of file after the
    result line. Its exit code and its lines, stripped."""
    proc = spawn(argv, cwd=ROOT, env={**env, "WSBENCH_HOLD": "1"}, text=True, stdin=subprocess.PIPE,
                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    lines: list[str] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for line in proc.stdout:
            lines.append(line.strip())
            if line.strip() == "WSBENCH-START":
                proc.stdin.write("GO\n")
                proc.stdin.flush()
            elif line.startswith("WSBENCH-MARK "):
                if at_mark is not None:
                    at_mark()
                if mark_line is None:
                    proc.stdin.close()
                else:
                    proc.stdin.write(mark_line)
                    proc.stdin.flush()
            elif line.startswith("{"):
                break
        if not proc.stdin.closed:
            proc.stdin.close()
        return proc.wait(timeout=60), lines
    finally:
        if proc.poll() is None:
            kill_group(proc)
