"""One deterministic cell: the counted program under valgrind's callgrind, the other side
native, only the measured phase counted.

Callgrind starts with instrumentation off (``--instr-atstart=no``), so start-up, module
loading, the connection and the warm-up run uninstrumented (and about ten times faster
than instrumented code). The measured phase switches it on and off:

- a counted client (``qjs``, ``wsbench-loadgen``) switches it on when it reads ``GO`` at
  the start barrier and off before it prints its result line (callgrind client requests:
  ``check.count()`` in ``clients/quickjs-check/check.c``, ``COUNT_ON``/``COUNT_OFF`` in
  ``clients/loadgen/util.c``);
- the counted server (``lws-echo``) switches it on at the first SIGUSR1 and off at the
  second, confirming each with ``WSBENCH-COUNT on|off``; the harness sends the first
  while the client waits at its start barrier and the second once the client has printed
  its result, so the server is idle at both moments.

No clock is read for the figure: it is callgrind's instruction total over the messages
the client counted.

``run_cell`` takes the counter as a ``Counter`` (how the counted program's command is
wrapped, and how its total is read): ``CALLGRIND`` here, ``qemu.QEMU`` for the armhf client
under ``qemu-arm`` (gate/qemu.py), which marks the same phase the same way.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from .. import procs
from ..errors import WsbenchError
from ..logs import last_line
from ..paths import ROOT
from ..model import CellCount
from ..server import StdoutTail
from ..workloads import WorkloadSet
from .builds import HEAD, Build
from .cells import Cell, workload_for

VALGRIND = ("valgrind", "--tool=callgrind", "--instr-atstart=no", "--dump-instr=no", "--compress-strings=no")
READY = re.compile(r"^WSBENCH-READY port=(\d+)\s*$")
TOTALS = re.compile(r"^(?:totals|summary):\s*(\d+)", re.M)
STEP_TIMEOUT_S = 120.0  # any one step under valgrind: start-up, warm-up, the phase, exit


@dataclass(frozen=True)
class Count:
    cell: str
    instructions: int
    messages: int

    @property
    def per_message(self) -> float:
        return self.instructions / self.messages

    def record(self) -> CellCount:
        """As the baseline stores it (per message rounded to a tenth)."""
        return CellCount(self.instructions, self.messages, round(self.per_message, 1))


@dataclass(frozen=True)
class Counter:
    """What counts the counted program: its command's prefix given the output file, and
    the instruction total read from that file (WsbenchError naming the cell if none)."""

    tool: str
    suffix: str  # the output file's
    wrap: Callable[[Path], list[str]]
    total: Callable[[Path, str], int]


def run_cell(cell: Cell, workloads: WorkloadSet, profile: str, work_dir: Path, build: Build = HEAD,
             peer: Build = HEAD, counter: Counter | None = None) -> Count:
    """Count one cell, the counted program from ``build`` and the other side from ``peer``
    (both the working tree's by default), by ``counter`` (callgrind by default); WsbenchError
    (one line, naming the cell and the log) when it fails."""
    counter = counter or CALLGRIND
    work_dir.mkdir(parents=True, exist_ok=True)
    stem = cell.name.replace("/", "-") + ("" if build.side == "head" else f"@{build.side}")
    out_file = work_dir / f"{stem}{counter.suffix}"
    server_log, client_log = work_dir / f"{stem}.server.log", work_dir / f"{stem}.client.log"
    out_file.unlink(missing_ok=True)
    counted_server = cell.counted_side == "server"
    wrap = counter.wrap(out_file)
    env = {**os.environ, "WSBENCH_HOLD": "1"}

    def fail(what: str, log: Path) -> WsbenchError:
        side = "" if build.tree == "." else f" ({build.label})"
        return WsbenchError(f"gate cell {cell.name}{side}: {what} (log: {log}{last_line(log)})")

    workload, override = workload_for(cell, workloads, profile)
    server_build = build if counted_server else peer
    server = _spawn([*(wrap if counted_server else []), *server_build.lws_echo, "--port", "0", *cell.server_args()],
                    env, server_log, False)
    try:
        server_out = procs.LineReader(server)
        port = _wait_for(server_out, READY, STEP_TIMEOUT_S)
        if port is None:
            raise fail("the server printed no readiness line", server_log)
        if cell.tls:
            StdoutTail(server_out).start()  # its WSBENCH-TLS line per connection, drained
        argv = [*(wrap if not counted_server else []), *cell.client_command(peer if counted_server else build),
                "--url", f"{cell.scheme}://127.0.0.1:{port.group(1)}{workload.path}",
                *workload.client_args(override, min_seconds=0.0)]
        client = _spawn(argv, {**env, **cell.client_env()}, client_log, True)
        try:
            client_out = procs.LineReader(client)
            if _wait_for(client_out, re.compile(r"^WSBENCH-START$"), STEP_TIMEOUT_S) is None:
                raise fail("the client never reached its measured phase", client_log)
            if counted_server:
                _switch(server, server_out, "on", server_log, fail)
            problem = procs.tell(client, "GO")
            if problem:
                raise fail(f"client: {problem}", client_log)
            line = client_out.readline(time.monotonic() + STEP_TIMEOUT_S * 5)
            result = _result(line)
            if "error" in result or not isinstance(result.get("messages"), int) or result["messages"] < 1:
                raise fail(f"the client failed: {str(result.get('error', line))[:200]}", client_log)
            if counted_server:
                _switch(server, server_out, "off", server_log, fail)
            procs.release(client)  # end-of-file: a held client exits
            code = _wait_exit(client, STEP_TIMEOUT_S)
            if code != 0:
                raise fail(f"the client exited with code {code}", client_log)
        finally:
            procs.terminate(client, grace_s=STEP_TIMEOUT_S)
        problem = procs.terminate(server, grace_s=STEP_TIMEOUT_S)
        if problem:
            raise fail(problem, server_log)
    finally:
        procs.terminate(server, grace_s=STEP_TIMEOUT_S)
    return Count(cell.name, counter.total(out_file, cell.name), int(result["messages"]))


def _spawn(argv: list[str], env: dict[str, str], log: Path, stdin: bool) -> subprocess.Popen[bytes]:
    try:
        return procs.spawn(argv, cwd=ROOT, env=env, stderr_path=log, stdin_pipe=stdin)
    except OSError as exc:
        raise WsbenchError(f"cannot start {argv[0]}: {exc.strerror}") from None


def _wait_for(reader: procs.LineReader, pattern: re.Pattern[str], timeout_s: float) -> re.Match[str] | None:
    deadline = time.monotonic() + timeout_s
    while True:
        line = reader.readline(deadline)
        if line is None:
            return None
        match = pattern.match(line)
        if match:
            return match


def _switch(server: subprocess.Popen[bytes], reader: procs.LineReader, state: str, log: Path,
            fail: Any) -> None:
    """Switch the counted server's instrumentation and wait for its confirmation."""
    try:
        os.kill(server.pid, signal.SIGUSR1)
    except OSError as exc:
        raise fail(f"cannot signal the server: {exc.strerror}", log) from None
    if _wait_for(reader, re.compile(rf"^WSBENCH-COUNT {state}$"), STEP_TIMEOUT_S) is None:
        raise fail(f"the server did not confirm counting {state}", log)


def _result(line: str | None) -> dict[str, Any]:
    if line is None:
        return {"error": "no result line"}
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return {"error": f"not a result line: {line[:120]!r}"}
    return value if isinstance(value, dict) else {"error": f"not a result line: {line[:120]!r}"}


def _wait_exit(proc: subprocess.Popen[bytes], timeout_s: float) -> int | None:
    try:
        return proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return None


def _instructions(path: Path, cell: str) -> int:
    """Callgrind's instruction total from its output file."""
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        raise WsbenchError(f"gate cell {cell}: callgrind wrote no {path.name} ({exc.strerror})") from None
    totals = [int(m) for m in TOTALS.findall(text)]
    total = max(totals, default=0)
    if total <= 0:
        raise WsbenchError(f"gate cell {cell}: callgrind counted no instruction in the measured phase "
                           f"(was the program built with valgrind/callgrind.h? run: make setup)")
    return total


CALLGRIND = Counter("callgrind", ".callgrind", lambda out: [*VALGRIND, f"--callgrind-out-file={out}"], _instructions)
