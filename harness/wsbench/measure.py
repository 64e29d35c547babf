"""One repetition of one cell: run a client against a running server and take readings.

The client is held at both ends of its measured phase (``WSBENCH_HOLD=1``, see
clients/README.md), on its stdin or, for a client that cannot read it (k6: the catalog's
``barrier = "http"``), over a loopback HTTP endpoint (hold.py):
- start barrier: at ``WSBENCH-START`` the client waits; the harness reads both sides' CPU
  clocks, then tells it ``GO``, and only then does the client start its clock. Nothing
  the client measures can run before the readings are taken.
- end: the client prints its result line after stopping its clock and stays alive, its
  connections open, until the harness lets it go; the harness reads both CPU clocks, peak
  RSS and the server's sockets in that moment.

Readings:
- CPU of either side: its process CPU clock between the two lines (see procfs). A reading
  that cannot be taken, is zero, or runs backwards fails the sample with a one-line
  reason. A client that exited before the end reading (it did not hold) is read from
  rusage when reaped instead, which also counts its shutdown; ``client_cpu_method`` says
  which was used ("clock" or "rusage").
- peak RSS: each side's VmHWM; the server's is reset before the run and at every mark,
  which records the peak since the previous one (the sample's is the largest). A reset or reading
  that fails leaves that reading empty (None) with a line in ``reading_errors``: a value
  is never carried over from an earlier cell.
- bytes on the wire: the kernel's counters of the server's connections at both barriers
  (socket_bytes.py, ``extra.wire``), where the connections are the same at both.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Protocol

from . import backpressure, procfs, procs, qemu_guest, socket_bytes, tcp_ends
from .hold import GO_LINE, Hold, hold_for
from .catalog import Program
from .logs import last_line
from .paths import ROOT
from .model import Sample, Settings
from .server import ServerHandle
from .certificates import tls_summary
from .rsscap import RssCap
from .deflate import deflate_summary
from .workloads import HOLDING_KINDS, SOCKET_MARK_KINDS, Workload

START_LINE = "WSBENCH-START"
MARK_PREFIX = "WSBENCH-MARK "  # a point inside the measured phase (clients/README.md): readings, then GO
STARTUP_ALLOWANCE_S = 20.0
MARK_SETTLE_S = 0.1  # between the two socket readings of a mark (SOCKET_MARK_KINDS)
RESULT_KEYS = ("messages", "bytes", "seconds", "msgs_per_s", "mb_per_s", "errors")


@dataclass
class _Clocks:
    """Both sides' CPU clocks at the start and end of the measured phase, in ns."""

    client0: int | None = None
    server0: int | None = None
    client1: int | None = None
    server1: int | None = None

    def start_problem(self, server_readable: bool = True) -> str | None:
        sides = (("client", self.client0), ("server", self.server0)) if server_readable else (("client", self.client0),)
        for side, value in sides:
            if value is None:
                return f"{side} CPU clock could not be read at the start barrier"
            if value <= 0:
                return f"{side} CPU clock read {value} ns at the start barrier"
        return None

    def server_problem(self) -> str | None:
        if self.server0 is None:
            return None
        if self.server1 is None:
            return "server CPU clock could not be read at the end of the measured phase"
        if self.server1 < self.server0:
            return f"server CPU clock ran backwards ({self.server0} ns, then {self.server1} ns)"
        return None

    def client_problem(self, seconds: float | None) -> str | None:
        if self.client0 is None or self.client1 is None:
            return None
        if self.client1 < self.client0:
            return f"client CPU clock ran backwards ({self.client0} ns, then {self.client1} ns)"
        if self.client1 == self.client0 and seconds:
            return (f"client CPU time over its {seconds:.3f} s measured phase is zero: the readings "
                    "were not taken around the phase")
        return None


class PhaseObserver(Protocol):
    """Something that acts at the edges of the measured phase (wsbench profile attaches
    perf there). Each method returns None, or a one-line problem that fails the sample."""

    def spawned(self, pid: int) -> str | None:
        """The client process exists (it has not reached its measured phase yet)."""

    def started(self) -> str | None:
        """The client is at its start barrier; called before the readings and GO."""

    def ended(self) -> str | None:
        """The client printed its result and is held; called before the end readings."""


def run_client(client: Program, server: ServerHandle, workload: Workload, rep: int,
               log_dir: Path, settings: Settings, override: dict[str, Any] | None = None,
               observer: PhaseObserver | None = None) -> Sample:
    """One run of ``client`` against ``server``; ``override`` replaces workload parameters
    (a rate sweep runs the same workload at several rates); ``observer`` is told when the
    measured phase starts and ends."""
    hold = hold_for(client.barrier)
    try:
        return _Measurement(client, server, workload, rep, log_dir, settings, override, observer, hold).run()
    finally:
        hold.close()  # also lets go of a client still waiting in it (the HTTP barrier)


@dataclass
class _Phase:
    """What the client's lines told and what was read meanwhile."""

    clocks: _Clocks = field(default_factory=_Clocks)
    started: bool = False
    seen: float = 0.0  # when the start line came (time.monotonic)
    marks: dict[str, dict[str, Any]] = field(default_factory=dict)
    fdlimits: dict[str, Any] = field(default_factory=dict)
    client_hwm: int | None = None
    server_hwm: int | None = None
    result: dict[str, Any] | None = None
    problem: str | None = None  # fails the sample; the client is stopped
    stray: str = ""  # the last line that was neither a marker nor a result
    timed_out: bool = False
    wire0: socket_bytes.Reading | str | None = None  # the server's sockets at the start barrier
    wire1: socket_bytes.Reading | str | None = None  # and at the end barrier


class _Measurement:
    """One client process against one server: spawned, followed line by line (the start
    barrier, its marks, its result) while both sides are read, reaped, and judged."""

    def __init__(self, client: Program, server: ServerHandle, workload: Workload, rep: int, log_dir: Path,
                 settings: Settings, override: dict[str, Any] | None, observer: PhaseObserver | None,
                 hold: Hold) -> None:
        self.client, self.server, self.workload, self.settings = client, server, workload, settings
        self.override, self.observer, self.hold = override, observer, hold
        self.sample = Sample(rep=rep)
        self.culprit = f"client '{client.name}' vs server '{server.program.name}' on '{workload.name}'"
        tag = "".join(f"-{k}{v}" for k, v in (override or {}).items())
        self.log = log_dir / (f"client-{client.name}-{server.program.name}-{workload.name}{tag}-{rep}.log"
                              .replace("/", "~"))
        self.checks = settings.verify != "off" and client.echo_checks
        self.server_pid = server.pid  # None: a server wsbench cannot read (--target): no server readings
        self.server_port = socket_bytes.port_of(server.url())

    def fail(self, why: str) -> Sample:
        self.sample.error = f"{self.culprit}: {why}"
        return self.sample

    def run(self) -> Sample:
        if not self.server.alive():
            return self.fail(f"server has exited (log: {self.server.log})")
        argv = [*self.client.command, "--url", self.server.url(self.workload.path),
                *self.workload.client_args(self.override, min_seconds=self.settings.min_seconds, verify=self.checks)]
        rss_reset = procfs.reset_peak_rss(self.server_pid) if self.server_pid is not None else None
        if rss_reset:
            self.sample.reading_errors.append(f"server peak RSS: {rss_reset}")
        mark = self.server.stdout_mark()
        before = procfs.rss_kib(self.server_pid) if self.server_pid is not None else None
        began = time.monotonic()
        try:
            proc = procs.spawn(argv, cwd=ROOT, env={**os.environ, **self.hold.env, **self.client.env},
                               stderr_path=self.log, stdin_pipe=self.hold.stdin,
                               cpus=self.settings.pinning.client if self.settings.pinning else None)
        except OSError as exc:
            return self.fail(f"cannot start {argv[0]}: {exc.strerror}")
        self.hold.attach(proc)
        deadline = began + self.workload.timeout_for(self.settings.min_seconds) + STARTUP_ALLOWANCE_S
        if self.observer is not None:
            refused = self.observer.spawned(proc.pid)
            if refused:
                _stop(proc, self.sample)
                return self.fail(refused)
        cap = (RssCap(self.workload.server_rss_cap_mib, self.server_pid, proc.pid).start()
               if self.workload.server_rss_cap_mib and self.server_pid is not None else None)
        phase = self.follow(proc, began, deadline)
        if cap is not None and cap.finish() is not None:
            return self.capped(cap, phase, proc, began)
        if phase.problem is not None:
            _stop(proc, self.sample)
            return self.fail(phase.problem)
        if phase.timed_out:
            _stop(proc, self.sample)
            return self.fail(f"no result within {deadline - began:.0f} s (log: {self.log})")
        rusage = _reap(proc, self.sample, deadline=time.monotonic() + 10.0)
        self.sample.wall_s = time.monotonic() - began
        self.sample.exit_code = proc.returncode
        self.sample.error = _judge(self.culprit, phase.result, proc.returncode, self.log, phase.stray) or (
            f"{self.culprit}: {self.sample.error}" if self.sample.error else None)
        if self.sample.error is not None or phase.result is None:
            return self.sample
        return self.readings(phase, phase.result, rusage, before, mark, rss_reset)

    def capped(self, cap: RssCap, phase: _Phase, proc: Any, began: float) -> Sample:
        """A sample stopped by its RSS cap (rsscap.py): both sides were killed; its outcome
        and the readings taken until then, not a failure."""
        _reap(proc, self.sample, deadline=time.monotonic() + 10.0)
        self.sample.wall_s = time.monotonic() - began
        self.sample.exit_code = proc.returncode
        line, record = cap.outcome(phase.seen if phase.started else began)
        self.sample.extra = {"stopped": line, "rss_cap": record, "marks": phase.marks}
        if cap.problems:
            self.sample.error = f"{self.culprit}: {line}, and {cap.problems[0]}"
        return self.sample

    def follow(self, proc: Any, began: float, deadline: float) -> _Phase:
        """The client's lines until its result, a problem, or the deadline."""
        phase = _Phase()
        reader = procs.LineReader(proc)
        try:
            while phase.result is None and phase.problem is None:
                line = reader.readline(deadline)
                if line is None:
                    break
                if line == START_LINE:
                    self.on_start(phase, proc)
                elif line.startswith(MARK_PREFIX):
                    phase.problem = _mark(line[len(MARK_PREFIX):].strip(), phase.marks, phase.started, phase.clocks,
                                          proc, self.server_pid, phase.seen if phase.started else began,
                                          self.mark_sockets if self.workload.kind in SOCKET_MARK_KINDS else None)
                elif line.startswith("{"):
                    self.on_result(phase, proc, line)
                elif line.strip():
                    phase.stray = line.strip()
            phase.timed_out = phase.result is None and phase.problem is None and not reader.eof
        finally:
            reader.close()
        return phase

    def mark_sockets(self) -> dict[str, Any]:
        """At a mark of a kind that needs them: both ends of the connection (tcp_ends.py),
        and again a moment later (whether the kernel's queues still move)."""
        if self.server_port is None:
            return {"tcp": "the server's port is not known"}
        first = tcp_ends.read(self.server_port)
        time.sleep(MARK_SETTLE_S)
        return {"tcp": first, "tcp_later": tcp_ends.read(self.server_port)}

    def on_start(self, phase: _Phase, proc: Any) -> None:
        """The start barrier: both sides' CPU clocks and descriptor limits, then GO."""
        if phase.started:
            phase.problem = f"{START_LINE} printed twice"
            return
        phase.started = True
        phase.seen = time.monotonic()
        if self.observer is not None:
            phase.problem = self.observer.started()
            if phase.problem:
                return
        server_pid = self.server_pid
        phase.clocks.client0 = procfs.process_cpu_ns(proc.pid)
        phase.clocks.server0 = procfs.process_cpu_ns(server_pid) if server_pid is not None else None
        phase.fdlimits = {"client_nofile": procfs.fd_limit(proc.pid),
                          "server_nofile": procfs.fd_limit(server_pid) if server_pid is not None else None}
        if self.server_port is not None:
            phase.wire0 = socket_bytes.read(self.server_port)
        phase.problem = phase.clocks.start_problem(server_pid is not None)
        if phase.problem is None:
            refused = self.hold.go()
            if refused:
                phase.problem = f"start barrier: {refused}"
        self.sample.barrier_s = time.monotonic() - phase.seen

    def on_result(self, phase: _Phase, proc: Any, line: str) -> None:
        """The result line, the client held: the end readings, then the hold released."""
        if self.observer is not None and phase.started:
            phase.problem = self.observer.ended()
        if self.server_pid is not None:
            phase.clocks.server1 = procfs.process_cpu_ns(self.server_pid)
            phase.server_hwm = _peak_of(procfs.peak_rss_kib(self.server_pid), phase.marks)
        phase.clocks.client1 = procfs.process_cpu_ns(proc.pid)
        phase.client_hwm = procfs.peak_rss_kib(proc.pid)
        if phase.wire0 is not None and self.server_port is not None:
            phase.wire1 = socket_bytes.read(self.server_port)
        if not procfs.running(proc.pid):  # it did not hold: readings may be partial
            phase.clocks.client1 = phase.client_hwm = None
        self.hold.release()
        phase.result = parse_result(line)
        if phase.started is False and "error" not in phase.result:
            phase.problem = f"result line before {START_LINE}: the readings were never taken"

    def readings(self, phase: _Phase, result: dict[str, Any], rusage: Any, before: int | None, mark: int,
                 rss_reset: str | None) -> Sample:
        """The sample of a client that ended well: its figures, the readings of both sides,
        and the checks that can still fail it."""
        sample, workload, clocks = self.sample, self.workload, phase.clocks
        for key in RESULT_KEYS:
            setattr(sample, key, result[key])
        sample.extra = {k: v for k, v in result.items() if k not in RESULT_KEYS}
        if phase.marks:
            sample.extra["marks"] = phase.marks
        if workload.kind in SOCKET_MARK_KINDS:  # bufferedAmount beside the kernel's queues
            sample.extra["backpressure"] = backpressure.judge(sample.extra)
        if workload.kind in HOLDING_KINDS:
            sample.extra["limits"] = phase.fdlimits
            sample.extra["server_rss_before_kib"] = before
            stopped = stopped_at(workload, self.override, sample.extra, self.server.program.name)
            if stopped:
                sample.extra["stopped"] = stopped
                wanted = (self.override or {}).get("connections", workload.params.get("connections"))
                if wanted != "max":
                    return self.fail(stopped)
        printed = self.server.printed(mark)
        server_tls = tls_summary(printed.get("tls", []))
        if server_tls is not None:
            sample.extra["server_tls"] = server_tls
        server_deflate = deflate_summary(printed.get("deflate", []))
        if server_deflate is not None:
            sample.extra["server_deflate"] = server_deflate
        if phase.wire0 is not None and phase.wire1 is not None:
            wire = socket_bytes.phase(phase.wire0, phase.wire1, sample.messages or 0)
            if isinstance(wire, str):
                sample.reading_errors.append(f"bytes on the wire: {wire}")
            else:
                sample.extra["wire"] = wire
        if result["errors"]:
            return self.fail(f"{result['errors']} echoes did not match what was sent")
        unmet = self.client.unmet(result, "result line")  # e.g. ws with or without bufferutil, as the catalog says
        if unmet:
            return self.fail(unmet)
        problem = clocks.server_problem() or clocks.client_problem(sample.seconds)
        if problem:
            return self.fail(problem)
        if clocks.client0 is not None and clocks.client1 is not None:
            sample.client_cpu_s, sample.client_cpu_method = (clocks.client1 - clocks.client0) / 1e9, "clock"
        elif rusage is not None and clocks.client0 is not None:
            sample.client_cpu_s = rusage.ru_utime + rusage.ru_stime - clocks.client0 / 1e9
            sample.client_cpu_method = "rusage"
        if clocks.server0 is not None and clocks.server1 is not None:
            sample.server_cpu_s = (clocks.server1 - clocks.server0) / 1e9
        sample.client_peak_rss_kib = phase.client_hwm or (rusage.ru_maxrss if rusage is not None else None)
        if sample.client_peak_rss_kib is None:
            sample.reading_errors.append("client peak RSS: not readable (the client exited before the end reading)")
        if rss_reset is None and self.server_pid is not None:
            sample.server_peak_rss_kib = phase.server_hwm
            if phase.server_hwm is None:
                sample.reading_errors.append(f"server peak RSS: /proc/{self.server_pid}/status not readable")
        unchecked = _unchecked(workload, sample, self.checks)
        if unchecked:
            return self.fail(unchecked)
        return sample


def stopped_at(workload: Workload, override: dict[str, Any] | None, extra: dict[str, Any],
               server: str) -> str | None:
    """A client that held fewer connections than asked because a limit stopped it (its
    result's ``limit``): one line, with the descriptor limit of the side it ran into where
    that explains it. None when nothing stopped it."""
    limit = extra.get("limit")
    if not limit:
        return None
    held = extra.get("connections")
    text = f"stopped at N = {held:,}: {limit}" if isinstance(held, int) else f"stopped: {limit}"
    limits = extra.get("limits") or {}
    for side, name in (("server_nofile", f"the {server} process"), ("client_nofile", "the client process")):
        soft = (limits.get(side) or [None])[0]
        if isinstance(held, int) and isinstance(soft, int) and soft > 0 and held >= soft - 64:
            return f"{text} (the file-descriptor limit of {name} is {soft:,})"
    return text


def _mark(name: str, marks: dict[str, dict[str, Any]], started: bool, clocks: "_Clocks", proc: Any,
          server_pid: int | None, since: float,
          more: Callable[[], dict[str, Any]] | None = None) -> str | None:
    """``WSBENCH-MARK name`` inside the measured phase: both sides' CPU since the start
    readings, their resident memory and open descriptors now, then GO. None, or why the sample fails."""
    if not started:
        return f"{MARK_PREFIX}{name} before {START_LINE}"
    if not name or name in marks:
        return f"{MARK_PREFIX}{name!r}: a mark needs a name of its own"
    client_cpu = procfs.process_cpu_ns(proc.pid)
    server_cpu = procfs.process_cpu_ns(server_pid) if server_pid is not None else None
    marks[name] = {
        "t_s": round(time.monotonic() - since, 6),
        "client_cpu_s": None if client_cpu is None or clocks.client0 is None else (client_cpu - clocks.client0) / 1e9,
        "server_cpu_s": None if server_cpu is None or clocks.server0 is None else (server_cpu - clocks.server0) / 1e9,
        "client_rss_kib": procfs.rss_kib(proc.pid),
        "server_rss_kib": procfs.rss_kib(server_pid) if server_pid is not None else None,
        "server_peak_rss_kib": _peak_since_last(server_pid),
        "client_fds": procfs.fd_count(proc.pid),  # open descriptors (soak drift: soakfit.py)
        "server_fds": procfs.fd_count(server_pid) if server_pid is not None else None,
    }
    guest = qemu_guest.guest_rss_kib(proc.pid)  # a client under qemu-user: what its guest holds
    if guest is not None:
        marks[name]["client_guest_rss_kib"] = guest
    if more is not None:  # readings of the kind's own (SOCKET_MARK_KINDS), before GO
        marks[name].update(more())
    refused = procs.tell(proc, GO_LINE)
    return f"mark {name}: {refused}" if refused else None


def _peak_since_last(pid: int | None) -> int | None:
    """The server's peak RSS since the previous mark (or the sample's start), reset for the next."""
    if pid is None:
        return None
    peak = procfs.peak_rss_kib(pid)
    procfs.reset_peak_rss(pid)
    return peak


def _peak_of(hwm: int | None, marks: dict[str, dict[str, Any]]) -> int | None:
    """The sample's peak: VmHWM at the end, or the largest a mark read before resetting it."""
    peaks = [m["server_peak_rss_kib"] for m in marks.values() if isinstance(m.get("server_peak_rss_kib"), int)]
    return max([hwm, *peaks]) if hwm is not None else None


def _unchecked(workload: Workload, sample: Sample, checks: bool) -> str | None:
    """A client that echoes but says it checked fewer echoes than it counted."""
    if not checks or not workload.verifies():
        return None
    checked = sample.extra.get("checked")
    if checked != sample.messages:
        return (f"the client checked {checked!r} of its {sample.messages} echoes; every echo must be "
                "checked (clients/README.md, Verification)")
    return None


def _stop(proc: Any, sample: Sample) -> None:
    _kill_problem(sample, procs.terminate(proc))


def _kill_problem(sample: Sample, problem: str | None) -> None:
    """A process group the kernel would not let us kill fails the sample: what is left of
    it could disturb every later cell."""
    if problem:
        sample.reading_errors.append(f"client process group: {problem}")
        sample.error = sample.error or f"client process group: {problem}"


def parse_result(line: str) -> dict[str, Any]:
    """A client's result line as a dict; a line that is not a JSON object becomes an error."""
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
        return f"{culprit}: {str(result['error']).splitlines()[0][:300]}"
    missing = [k for k in RESULT_KEYS if not isinstance(result.get(k), (int, float))]
    if missing:
        return f"{culprit}: result lacks {', '.join(missing)}"
    if code != 0:
        return f"{culprit}: exited with code {code} after its result (log: {log})"
    return None


def _reap(proc: Any, sample: Sample, deadline: float) -> Any:
    """Wait for the client with wait4 so its rusage is ours; kill it past the deadline."""
    while True:
        pid, status, rusage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            _kill_problem(sample, procs.forget(proc))
            return rusage
        if time.monotonic() > deadline:
            _stop(proc, sample)
            return None
        time.sleep(0.005)
