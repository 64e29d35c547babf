"""Profiling one cell (workload x server x client) end to end.

Three passes, one after the other, never inside a timing run:

1. **unprofiled**: the normal build, no flags, no perf: the rate the profile is compared
   with (the overhead of profiling is the drop from this rate to the next pass's);
2. **perf**: the profiled side(s) from the profiling build with their JIT code named
   (variants.py); ``perf record`` attached to each profiled process at the client's
   start barrier (after the warm-up, so that it sees every JIT code mapping), its events
   enabled there and disabled when the client reports its result (record.py), so only
   the measured phase is sampled. Then
   ``perf script`` with the perf maps in place (Bun's made from its jitdump first), the
   maps removed, the where-the-time-goes table (breakdown.py), folded stacks and one SVG
   per side (flamegraph.py);
3. **cpu-prof** (Node, Deno, Bun): the runtime's own sampling profiler, a ``.cpuprofile``
   per profiled side (for the whole process: start-up and warm-up included), also
   folded and drawn.

Files go to ``<out>/<workload>/<server>/<client>/``: ``<side>.perf.data``,
``<side>.folded``, ``<side>.svg``, ``<side>.perf.map`` (a copy of the JIT names),
``<side>.cpuprofile`` (+ ``.folded``, ``.svg``), ``breakdown.md`` and ``logs/``.
"""

from __future__ import annotations

import os
import shutil
import statistics
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .. import procs
from ..catalog import Program
from ..errors import WsbenchError
from ..measure import run_client
from ..paths import ROOT, relative
from ..model import OverheadRuns, PassResult, ProfileCell, Sample, Settings
from ..server import RunningServer, start_server
from ..report import render
from ..workloads import Workload
from . import breakdown, cpuprofile, flamegraph, jitdump, stacks, variants
from .record import DEFAULT_FREQUENCY, PerfRecord
from .views import cell_document

SIDES = ("client", "server")
PERF_SCRIPT_TIMEOUT_S = 600.0
MAP_DIR = Path("/tmp")


@dataclass
class CellPlan:
    workload: Workload
    server: Program
    client: Program
    sides: tuple[str, ...]  # "client", "server" or both

    @property
    def key(self) -> str:
        return f"{self.workload.name}/{self.server.name}/{self.client.name}"


@dataclass
class _Observer:
    """Attaches perf to each profiled side (measure.PhaseObserver)."""

    perf: str
    out: Path
    logs: Path
    frequency: int
    server_pid: int | None  # set when the server side is profiled
    profile_client: bool
    recorders: dict[str, PerfRecord] = field(default_factory=dict)
    client_pid: int | None = None

    def _attach(self, side: str, pid: int) -> str | None:
        # an earlier overhead run's data is replaced (perf would keep it as .old)
        (self.out / f"{side}.perf.data").unlink(missing_ok=True)
        rec = PerfRecord(self.perf, pid, self.out / f"{side}.perf.data", self.logs / f"perf-record-{side}.log",
                         self.frequency)
        self.recorders[side] = rec
        problem = rec.start()
        return f"{side} side: {problem}" if problem else None

    def spawned(self, pid: int) -> str | None:
        self.client_pid = pid
        return None

    def started(self) -> str | None:
        # perf attaches at the barrier, not at the spawn: it learns a process's code mappings
        # from /proc/PID/maps when it attaches and from mmap records afterwards, and perf
        # 6.1 records none while its events are disabled (-D -1 until 'enable'), so the JIT
        # code V8 mapped during the warm-up went unnamed ([unknown]) though the perf map
        # named it (node-ws, two runs of four). At the barrier the client runs no code.
        for side, pid in (("server", self.server_pid), ("client", self.client_pid if self.profile_client else None)):
            if pid is not None:
                problem = self._attach(side, pid)
                if problem:
                    return problem
        for side, rec in self.recorders.items():
            problem = rec.enable()
            if problem:
                return f"{side} side: {problem}"
        return None

    def ended(self) -> str | None:
        problems = [f"{side} side: {p}" for side, rec in self.recorders.items() if (p := rec.disable())]
        return problems[0] if problems else None

    def stop(self) -> list[str]:
        return [f"{side} side: {p}" for side, rec in self.recorders.items() if (p := rec.stop())]


def profile_cell(plan: CellPlan, out_root: Path, settings: Settings, perf: str,
                 frequency: int = DEFAULT_FREQUENCY, note: Any = print, overhead_runs: int = 1) -> ProfileCell:
    """Profile one cell; returns its entry of the results' ``profiles`` section. A pass
    that fails leaves ``error`` set (the files so far stay). ``overhead_runs``: the
    unprofiled and perf passes alternate that many times (the overhead compares their
    medians); the files are those of the last perf pass."""
    out = out_root / plan.workload.name / plan.server.name / plan.client.name
    logs = out / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    runs = OverheadRuns()
    entry = ProfileCell(plan.workload.name, plan.server.name, plan.client.name, list(plan.sides), relative(out),
                        frequency_hz=frequency, overhead_runs=runs)
    try:
        for run in range(overhead_runs):
            last = run == overhead_runs - 1
            unprofiled = _unprofiled(plan, settings, logs, entry)
            runs.unprofiled.append(unprofiled.msgs_per_s)
            note(f"  {plan.key}: unprofiled {unprofiled.msgs_per_s or 0:,.0f} msgs/s")
            runs.profiled.append(_perf_pass(plan, settings, perf, frequency, out, logs, entry, symbolize=last).msgs_per_s)
        _cpu_prof_pass(plan, settings, out, logs, entry)
    except WsbenchError as exc:
        entry.error = str(exc)
    entry.overhead = overhead(runs)
    (out / "breakdown.md").write_text(render(cell_document(entry), "md"))
    entry.files["breakdown"] = relative(out / "breakdown.md")
    return entry


def _pass_result(sample: Sample) -> PassResult:
    return PassResult(sample.msgs_per_s, sample.seconds, sample.messages, sample.client_cpu_s, sample.server_cpu_s,
                      sample.error,
                      # the kind's own figures (delivery_ms of a large message, latency percentiles, ...)
                      {k: v for k, v in sample.extra.items() if isinstance(v, (int, float, dict))})


def _with_server(program: Program, logs: Path, body: Any) -> Any:
    server = start_server(program, logs)
    try:
        return body(server)
    finally:
        problem = server.stop()
        if problem:
            raise WsbenchError(f"server '{program.name}' could not be stopped: {problem}")


def _unprofiled(plan: CellPlan, settings: Settings, logs: Path, entry: ProfileCell) -> PassResult:
    sample = _with_server(plan.server, logs / "unprofiled", lambda server: run_client(
        plan.client, server, plan.workload, 1, logs / "unprofiled", settings))
    entry.unprofiled = _pass_result(sample)
    if sample.error:
        raise WsbenchError(f"unprofiled pass: {sample.error}")
    return entry.unprofiled


def _perf_pass(plan: CellPlan, settings: Settings, perf: str, frequency: int, out: Path, logs: Path,
               entry: ProfileCell, symbolize: bool = True) -> PassResult:
    with tempfile.TemporaryDirectory(prefix="wsbench-jitdump-") as tmp:
        dumps = Path(tmp)
        chosen = {side: variants.for_perf(program, dumps, logs / f"{side}-v8.log") if side in plan.sides else None
                  for side, program in (("client", plan.client), ("server", plan.server))}
        for side, variant in chosen.items():
            if variant is not None:
                missing = variant.program.missing()
                if missing:
                    raise WsbenchError(f"{side} '{variant.program.name}': {missing[0]} (the profiling build) "
                                       "is missing; run: make setup")
                if variant.jit.note:
                    entry.notes.append(f"{side}: {variant.jit.note}.")
        server_program = chosen["server"].program if chosen["server"] else plan.server
        client_program = chosen["client"].program if chosen["client"] else plan.client
        pass_logs = logs / "perf"
        pids: dict[str, int] = {}

        def body(server: RunningServer) -> Sample:
            observer = _Observer(perf, out, logs, frequency, server.pid if chosen["server"] else None,
                                 chosen["client"] is not None)
            pids["server"] = server.pid
            try:
                sample = run_client(client_program, server, plan.workload, 1, pass_logs, settings,
                                    observer=observer)
            finally:
                problems = observer.stop()
                if observer.client_pid is not None:
                    pids["client"] = observer.client_pid
            entry.recorded_s = {side: rec.enabled_s for side, rec in observer.recorders.items()}
            if problems:
                raise WsbenchError(f"perf: {problems[0]}")
            return sample

        pass_logs.mkdir(parents=True, exist_ok=True)
        try:
            sample = _with_server(server_program, pass_logs, body)
            entry.profiled = _pass_result(sample)
            if sample.error:
                raise WsbenchError(f"perf pass: {sample.error}")
            for side in plan.sides if symbolize else ():
                variant = chosen[side]
                assert variant is not None
                _symbolize_and_draw(plan, side, variant, pids[side], dumps, perf, out, logs, entry)
        finally:  # also on failure or Ctrl-C: no perf map of ours is left in /tmp
            for pid in pids.values():
                (MAP_DIR / f"perf-{pid}.map").unlink(missing_ok=True)
    return entry.profiled


def _symbolize_and_draw(plan: CellPlan, side: str, variant: variants.Variant, pid: int, dumps: Path,
                        perf: str, out: Path, logs: Path, entry: ProfileCell) -> None:
    perf_map = MAP_DIR / f"perf-{pid}.map"
    try:
        if variant.jit.method == "jitdump":
            try:
                made, regions = jitdump.write_perf_map(dumps, pid, MAP_DIR)
            except (jitdump.JitdumpError, OSError) as exc:
                raise WsbenchError(f"{side}: Bun's jitdump could not be read: {exc}") from None
            entry.notes.append(f"{side}: {regions} JIT code regions named from Bun's jitdump"
                                  if made else f"{side}: Bun wrote no jitdump; its JIT frames stay unnamed")
        if perf_map.is_file():
            shutil.copyfile(perf_map, out / f"{side}.perf.map")
            entry.files[f"{side}_perf_map"] = relative(out / f"{side}.perf.map")
        elif variant.jit.method == "perf-map":
            entry.notes.append(f"{side}: the runtime wrote no /tmp/perf-{pid}.map; its JIT frames stay unnamed")
        script = out / f"{side}.perf.txt"
        try:
            code = procs.run([perf, "script", "-i", str(out / f"{side}.perf.data")], cwd=ROOT,
                             timeout_s=PERF_SCRIPT_TIMEOUT_S, stdout_path=script,
                             stderr_path=logs / f"perf-script-{side}.log")
        except TimeoutError as exc:
            raise WsbenchError(f"perf script: {exc}") from None
        if code != 0:
            raise WsbenchError(f"perf script exited with code {code} (log: {logs / f'perf-script-{side}.log'})")
    finally:
        perf_map.unlink(missing_ok=True)  # /tmp/perf-PID.map: ours (Bun) or the runtime's
    table = breakdown.build(stacks.read(script))
    entry.breakdown[side] = table.record()
    folded = out / f"{side}.folded"
    flamegraph.collapse_perf(script, folded, logs / "inferno.log")
    script.unlink()
    svg = out / f"{side}.svg"
    program = plan.client if side == "client" else plan.server
    flamegraph.svg(folded, svg, f"{plan.key}: {side} ({program.label}), perf, measured phase",
                   logs / "inferno.log", subtitle=f"{table.samples} samples of cpu-clock")
    entry.files[f"{side}_perf_data"] = relative(out / f"{side}.perf.data")
    entry.files[f"{side}_folded"] = relative(folded)
    entry.files[f"{side}_svg"] = relative(svg)


def _cpu_prof_pass(plan: CellPlan, settings: Settings, out: Path, logs: Path, entry: ProfileCell) -> None:
    dirs = {side: out / f"cpuprofile-{side}" for side in plan.sides}
    chosen = {side: variants.for_cpu_prof(program, dirs[side]) if side in plan.sides else None
              for side, program in (("client", plan.client), ("server", plan.server))}
    if not any(chosen.values()):
        return
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    pass_logs = logs / "cpu-prof"
    sample = _with_server(chosen["server"] or plan.server, pass_logs, lambda server: run_client(
        chosen["client"] or plan.client, server, plan.workload, 1, pass_logs, settings))
    entry.cpu_prof_pass = _pass_result(sample)
    if sample.error:
        raise WsbenchError(f"cpu-prof pass: {sample.error}")
    for side, program in chosen.items():
        if program is None:
            continue
        found = sorted(dirs[side].glob("*.cpuprofile"), key=lambda p: p.stat().st_mtime)
        if not found:
            entry.notes.append(f"{side}: --cpu-prof wrote no .cpuprofile")
            continue
        target = out / f"{side}.cpuprofile"
        os.replace(found[-1], target)
        shutil.rmtree(dirs[side], ignore_errors=True)
        try:
            lines = cpuprofile.folded(cpuprofile.read(target))
        except cpuprofile.CpuProfileError as exc:
            entry.notes.append(f"{side}: {exc}")
            continue
        folded = out / f"{side}.cpuprofile.folded"
        folded.write_text("".join(line + "\n" for line in lines))
        svg = out / f"{side}.cpuprofile.svg"
        flamegraph.svg(folded, svg, f"{plan.key}: {side} ({program.label}), --cpu-prof, whole process",
                       logs / "inferno.log")
        entry.files[f"{side}_cpuprofile"] = relative(target)
        entry.files[f"{side}_cpuprofile_svg"] = relative(svg)
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)


def overhead(runs: OverheadRuns) -> float | None:
    """The drop in msgs/s from the unprofiled passes to the perf passes (their medians)."""
    before = [v for v in runs.unprofiled if v]
    after = [v for v in runs.profiled if v]
    if not before or not after or len(before) != len(after):
        return None
    return 1.0 - statistics.median(after) / statistics.median(before)
