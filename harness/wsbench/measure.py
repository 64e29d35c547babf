"""One repetition of one cell: run a client against a running server and take readings.

Readings are taken at the client's ``WSBENCH-START`` line and at its result line, while
the client is held alive (``WSBENCH_HOLD=1``, released by closing its stdin):
- CPU of either side: its process CPU clock between the two lines (see procfs). A client
  that does not hold is read from rusage when reaped instead, which also counts its
  shutdown; ``client_cpu_method`` says which was used ("clock" or "rusage").
- peak RSS: each side's VmHWM; the server's is reset before the run. A client that did
  not hold reports ``ru_maxrss``.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from . import procfs, procs
from .logs import last_line
from .catalog import Program
from .paths import ROOT
from .server import RunningServer
from .workloads import Workload

START_LINE = "WSBENCH-START"
STARTUP_ALLOWANCE_S = 20.0
RESULT_KEYS = ("messages", "bytes", "seconds", "msgs_per_s", "mb_per_s", "errors")


@dataclass
class Sample:
    """What one repetition measured; ``error`` is set when it failed."""

    rep: int
    error: str | None = None
    messages: int | None = None
    bytes: int | None = None
    seconds: float | None = None
    msgs_per_s: float | None = None
    mb_per_s: float | None = None
    errors: int | None = None
    client_cpu_s: float | None = None
    client_cpu_method: str | None = None  # "clock" (held client) or "rusage" (fallback)
    server_cpu_s: float | None = None
    client_peak_rss_kib: int | None = None
    server_peak_rss_kib: int | None = None
    exit_code: int | None = None
    wall_s: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # the kind's own result keys

    @property
    def ok(self) -> bool:
        return self.error is None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def run_client(client: Program, server: RunningServer, workload: Workload, rep: int,
               log_dir: Path, override: dict[str, Any] | None = None) -> Sample:
    """One run of ``client`` against ``server``; ``override`` replaces workload parameters
    (a rate sweep runs the same workload at several rates)."""
    sample = Sample(rep=rep)
    culprit = f"client '{client.name}' vs server '{server.program.name}' on '{workload.name}'"
    if not server.alive():
        sample.error = f"{culprit}: server has exited (log: {server.log})"
        return sample
    tag = "".join(f"-{k}{v}" for k, v in (override or {}).items())
    log = log_dir / f"client-{client.name}-{server.program.name}-{workload.name}{tag}-{rep}.log"
    argv = [*client.command, "--url", server.url(workload.path), *workload.client_args(**(override or {}))]
    procfs.reset_peak_rss(server.pid)
    began = time.monotonic()
    try:
        proc = procs.spawn(argv, cwd=ROOT, env={**os.environ, "WSBENCH_HOLD": "1", **client.env},
                           stderr_path=log, stdin_pipe=True)
    except OSError as exc:
        sample.error = f"{culprit}: cannot start {argv[0]}: {exc.strerror}"
        return sample
    deadline = began + workload.timeout_s + STARTUP_ALLOWANCE_S
    reader = procs.LineReader(proc)
    client_ns0 = client_ns1 = server_ns0 = server_ns1 = client_hwm = None
    result: dict[str, Any] | None = None
    stray = ""  # the last line that was neither the start marker nor a result
    try:
        while result is None:
            line = reader.readline(deadline)
            if line is None:
                break
            if line == START_LINE:
                client_ns0 = procfs.process_cpu_ns(proc.pid)
                server_ns0 = procfs.process_cpu_ns(server.pid)
            elif line.startswith("{"):
                server_ns1 = procfs.process_cpu_ns(server.pid)
                sample.server_peak_rss_kib = procfs.peak_rss_kib(server.pid)
                client_ns1 = procfs.process_cpu_ns(proc.pid)
                client_hwm = procfs.peak_rss_kib(proc.pid)
                if not procfs.running(proc.pid):  # it did not hold: readings may be partial
                    client_ns1 = client_hwm = None
                procs.release(proc)
                result = _parse(line)
            elif line.strip():
                stray = line.strip()
        timed_out = result is None and not reader.eof
    finally:
        reader.close()
    if timed_out:
        procs.terminate(proc)
        sample.error = f"{culprit}: no result within {deadline - began:.0f} s (log: {log})"
        return sample
    rusage = _reap(proc, deadline=time.monotonic() + 10.0)
    sample.wall_s = time.monotonic() - began
    sample.exit_code = proc.returncode
    if client_ns0 is not None and client_ns1 is not None:
        sample.client_cpu_s, sample.client_cpu_method = (client_ns1 - client_ns0) / 1e9, "clock"
    elif rusage is not None and client_ns0 is not None:
        sample.client_cpu_s = rusage.ru_utime + rusage.ru_stime - client_ns0 / 1e9
        sample.client_cpu_method = "rusage"
    sample.client_peak_rss_kib = client_hwm or (rusage.ru_maxrss if rusage is not None else None)
    if server_ns0 is not None and server_ns1 is not None:
        sample.server_cpu_s = (server_ns1 - server_ns0) / 1e9
    sample.error = _judge(culprit, result, proc.returncode, log, stray)
    if sample.error is None and result is not None:
        for key in RESULT_KEYS:
            setattr(sample, key, result[key])
        sample.extra = {k: v for k, v in result.items() if k not in RESULT_KEYS}
        if result["errors"]:
            sample.error = f"{culprit}: {result['errors']} echoes did not match what was sent"
    return sample


def _parse(line: str) -> dict[str, Any]:
    try:
        value = json.loads(line)
    except json.JSONDecodeError:
        return {"error": f"unparsable result line: {line[:120]}"}
    if not isinstance(value, dict):
        return {"error": f"result is not a JSON object: {line[:120]}"}
    return value


def _judge(culprit: str, result: dict[str, Any] | None, code: int | None, log: Path,
           stray: str) -> str | None:
    if result is None:
        said = f"; last stdout line: {stray[:120]!r}" if stray else last_line(log)
        return f"{culprit}: exited with code {code} without a JSON result line (log: {log}{said})"
    if "error" in result:
        return f"{culprit}: {str(result['error']).splitlines()[0][:200]}"
    missing = [k for k in RESULT_KEYS if not isinstance(result.get(k), (int, float))]
    if missing:
        return f"{culprit}: result lacks {', '.join(missing)}"
    if code != 0:
        return f"{culprit}: exited with code {code} after its result (log: {log})"
    return None


def _reap(proc: Any, deadline: float) -> Any:
    """Wait for the client with wait4 so its rusage is ours; kill it past the deadline."""
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            procs.forget(proc)
            return rusage
        if time.monotonic() > deadline:
            procs.terminate(proc)
            return None
        time.sleep(0.005)
