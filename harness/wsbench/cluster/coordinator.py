"""The coordinator of ``wsbench run --cluster``: the plan of ``wsbench run`` (one
``--target``), one shard per load worker, every repetition of every cell run by all
shards at once behind one barrier, and the shards' runs merged by ``merge.merge_shards``
(the merge of ``wsbench merge``) into the run file, with what only the cluster knows:
the start skew of every repetition, and the server's CPU and RSS read on its host.

Failures: a shard that is not ready within the readiness timeout (or whose client fails
before the barrier) fails the run, naming the shard's worker and host; the repetition is
recorded as failed in every shard (never merged), the run stops, and the files written so
far are kept. A shard whose client fails after ``GO`` fails that repetition only (the
merge names the shard), like a failed sample of a run on one host.
"""

from __future__ import annotations

import concurrent.futures
import copy
import threading
import time
import uuid
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, Callable

from .. import merge, runner
from ..catalog import Catalog
from ..errors import WsbenchError
from ..measure import STARTUP_ALLOWANCE_S
from ..paths import ReportFiles, relative
from ..progress import Progress
from ..model import Cell, Run, Sample, now, write_json
from ..target import EXTERNAL, parse_url
from . import dask_engine, start, tasks
from .options import DEFAULT_READY_TIMEOUT_S

RETURN_ALLOWANCE_S = 30.0  # past the barrier's and the phase's own limits, for a task to come back
ENGINE = "Dask distributed"


@dataclass(frozen=True)
class Request:
    """``--cluster``, ``--server-worker``, ``--cluster-timeout`` and ``--target-pid`` (a
    process on the server's host, checked there)."""

    address: str
    server_worker: str | None = None
    ready_timeout_s: float = DEFAULT_READY_TIMEOUT_S
    target_pid: list[str] | None = None


def check(request: runner.Request, address: str, workloads: list[Any]) -> None:
    """What a cluster run cannot do, refused before anything starts."""
    if not (dask_engine.LOCAL.match(address) or dask_engine.ADDRESS.match(address)):
        raise WsbenchError(f"--cluster '{address}': give a Dask scheduler's address (tcp://HOST:PORT) or local:N")
    if not request.target or len(request.target) != 1:
        raise WsbenchError("--cluster measures one server wsbench did not start: give exactly one --target "
                           "(the load hosts must reach its address)")
    for flag, given in (("--shard", request.shard), ("--pin", request.pin), ("--tls", request.tls not in (None, "off")),
                        ("--environment-from", request.environment_from)):
        if given:
            raise WsbenchError(f"--cluster and {flag} exclude each other: the engine numbers the shards, and each "
                               "host is pinned and described by its own means (docs/scaling.md)")
    for w in workloads:
        if w.sweep:
            raise WsbenchError(f"workload '{w.name}' is a rate sweep: each shard would pick its own highest "
                               "rate; run its rates as open-loop workloads on the cluster")
    merge.refuse_unsharded(workloads, "--cluster")


class ClusterRun:
    """One run on a cluster: ``open`` connects (or starts ``local:N``) and probes the
    hosts; ``execute`` measures; ``close`` stops what was started."""

    def __init__(self, plan: runner.Plan, catalog: Catalog, argv: list[str], request: Request, files: ReportFiles,
                 log_dir: Path, progress: Progress) -> None:
        self.plan, self.catalog, self.argv, self.request = plan, catalog, argv, request
        self.files, self.log_dir, self.progress = files, log_dir, progress
        self.server_program = plan.servers[0]
        self.target = parse_url(self.server_program.command[0], allow_remote=True)
        self.template = runner.new_run(plan, catalog, argv)
        self.merged = copy.deepcopy(self.template)
        self.shard_runs: list[Run] = []
        self.engine: dask_engine.Engine | None = None
        self.server_worker: dask_engine.Worker | None = None
        self.load: list[dask_engine.Worker] = []
        self.server_pids: list[int] = []
        self.offsets: dict[str, dict[str, float]] = {}
        self.barriers: dict[tuple[str, int], dict[str, Any]] = {}
        self.failure: str | None = None
        self.run_id = uuid.uuid4().hex[:8]
        self._todo: dict[tuple[int, str], int] = {}  # (repetition, cell) -> its place in the run's order
        self.shards_dir = files.json.parent / f"shards-{files.stamp}"

    # -- the cluster ---------------------------------------------------------------------

    def open(self) -> None:
        self.progress.note(f"wsbench: cluster {self.request.address}: starting" if
                           dask_engine.LOCAL.match(self.request.address) else
                           f"wsbench: cluster {self.request.address}: connecting")
        self.engine = dask_engine.connect(self.request.address, self.log_dir, self.target.host)
        self.server_worker, self.load = dask_engine.roles(self.engine.workers, self.target.host,
                                                          self.request.server_worker)
        dask_engine.check_reach(self.target.host, self.load)
        self.offsets = self.engine.clock_offsets()
        hosts = ", ".join(f"{w.name} ({w.host})" for w in self.load)
        self.progress.note(f"wsbench: {ENGINE} {self.engine.version}, scheduler {self.engine.address}; "
                           f"{len(self.load)} load workers: {hosts}")
        self._probe_server_host()
        self._probe_load_hosts()
        self.shard_runs = [self._shard_run(i, w) for i, w in enumerate(self.load, 1)]
        self.shards_dir.mkdir(parents=True, exist_ok=True)
        self._refresh()

    def close(self) -> None:
        if self.engine is not None:
            self.engine.close()
            self.engine = None

    def _probe_server_host(self) -> None:
        pids = None
        if self.request.target_pid:
            pids = []
            for spec in self.request.target_pid:
                name, _, value = spec.rpartition("=")
                if name and name != self.server_program.name:
                    raise WsbenchError(f"--target-pid '{spec}': no target named '{name}'")
                if not value.isdigit() or int(value) <= 0:
                    raise WsbenchError(f"--target-pid '{spec}': '{value}' is not a process id")
                pids.append(int(value))
        record = self.template.servers[self.server_program.name]
        if self.server_worker is None:
            if pids:
                raise WsbenchError("--target-pid names a process on the server's host, but no worker runs there: "
                                   "start one on that host, or name it with --server-worker")
            record.readings = (f"n/a (external): no worker of the cluster runs on the server's host "
                               f"({self.target.host}); start one there, or name it with --server-worker")
            self.progress.note(f"wsbench: server CPU and RSS: {record.readings}")
            return
        assert self.engine is not None
        try:
            found = self.engine.client.submit(tasks.probe_server_host, self.target.host, self.target.port, pids,
                                              workers=[self.server_worker.address], allow_other_workers=False,
                                              pure=False).result(timeout=60)
        except Exception as exc:
            raise WsbenchError(f"{self.server_worker.label}: its probe failed: {type(exc).__name__}: {exc}") from None
        if found.get("error"):
            if pids:
                raise WsbenchError(f"--target-pid on {self.server_worker.label}: {found['error']}")
            record.readings = f"n/a: {self.server_worker.label}: {found['error']}"
        else:
            self.server_pids = list(found["pids"])
            procs_ = ", ".join(f"{p} ({n})" for p, n in zip(found["pids"], found["names"]))
            record.readings = (f"on its host by {self.server_worker.label}: process {procs_}, {found['how']}: "
                               "CPU-time clock and VmHWM from /proc over the union of the shards' phases")
        self.progress.note(f"wsbench: server CPU and RSS: {record.readings}")

    def _probe_load_hosts(self) -> None:
        assert self.engine is not None
        runtimes = sorted({c.runtime for c in self.plan.clients})
        futures = [self.engine.client.submit(tasks.probe_load_host, self.plan.clients,
                                             [self.catalog.runtimes[r] for r in runtimes], self.target.url,
                                             workers=[w.address], allow_other_workers=False, pure=False)
                   for w in self.load]
        self.probes = []
        for w, future in zip(self.load, futures):
            try:
                probe = future.result(timeout=120)
            except Exception as exc:
                raise WsbenchError(f"{w.label}: its probe failed: {type(exc).__name__}: {exc}") from None
            if probe["missing"]:
                name, files = next(iter(probe["missing"].items()))
                raise WsbenchError(f"{w.label}: client '{name}' needs {files[0]}, which is missing there; run make "
                                   "setup on that host")
            if not probe["verify"]["ok"]:
                raise WsbenchError(f"target {self.target.url} failed verification from {w.label}: "
                                   f"{probe['verify']['error']}; refused, nothing is measured against it")
            self.probes.append(probe)
        record = self.template.servers[self.server_program.name]
        record.checks = [f"echo verified from every load host ({self.probes[0]['verify']['checks']} checks each)"]
        self.progress.note(f"wsbench: target {self.target.url}: echo verified from {len(self.load)} load hosts")

    def _shard_run(self, shard: int, worker: dask_engine.Worker) -> Run:
        run = copy.deepcopy(self.template)
        run.environment = {**self.probes[shard - 1]["environment"], "worker": worker.to_json()}
        run.settings = {**run.settings, "shard": [shard, len(self.load)]}
        run.servers[self.server_program.name].readings = (
            f"{EXTERNAL}: a shard of a cluster run; the merged run has the server's readings from its host")
        return run

    # -- measuring -------------------------------------------------------------------------

    def execute(self, results: Path) -> Run:
        """Every repetition of every cell on all shards at once, through the run loop of
        ``wsbench run`` (``runner.measure_cells``: the merged run written to ``results``
        after each), the shards' runs beside it; the run stops at the first repetition whose
        start barrier was not released."""
        todo = [(rep, c) for rep, c in runner.interleaved(self.template.cells, self.plan.repetitions) if not c.na]
        self._todo = {(rep, cell.key): seq for seq, (rep, cell) in enumerate(todo)}
        try:
            if runner.measure_cells(self.merged, todo, self.plan.repetitions, self._on_every_shard, results,
                                    self.progress, suffix=f" x{len(self.load)} shards", stopped=lambda: self.failure):
                for run in self.shard_runs:
                    run.complete = True
        finally:
            for run in self.shard_runs:
                run.finished = now()
            self._refresh()
            self.progress.finish()
            self._save_shards()
            write_json(self.merged, results, summaries=False)
        return self.merged

    def _on_every_shard(self, rep: int, cell: Cell) -> Sample:
        """One repetition of ``cell`` on every shard behind one barrier: each shard's sample
        into its run (written beside the merged run), and the merged sample."""
        workloads = {w.name: w for w in self.plan.workloads}
        clients = {c.name: c for c in self.plan.clients}
        samples, info = self._repetition(self._todo[(rep, cell.key)], rep, cell, workloads[cell.workload],
                                         clients[cell.client])
        for run, sample in zip(self.shard_runs, samples):
            next(c for c in run.cells if c.key == cell.key).samples.append(sample)
        self.barriers[(cell.key, rep)] = info
        for run in self.shard_runs:
            run.finished = now()
        self._refresh()
        self._save_shards()
        return next(c for c in self.merged.cells if c.key == cell.key).samples[-1]

    def _repetition(self, seq: int, rep: int, cell: Cell, workload: Any,
                    client: Any) -> tuple[list[Sample], dict[str, Any]]:
        assert self.engine is not None
        c = self.engine.client
        names = start.Names(f"wsbench-{self.run_id}-{seq}")
        n = len(self.load)
        ready_s = self.request.ready_timeout_s
        phase_s = workload.timeout_for(self.plan.settings.min_seconds) + STARTUP_ALLOWANCE_S
        shard_logs = [str(self.log_dir / f"shard-{i}") if self.engine.local else f"{self.files.stamp}/shard-{i}"
                      for i in range(1, n + 1)]
        futures = [c.submit(tasks.run_shard, names.prefix, i, n, client, self.server_program, workload, rep,
                            shard_logs[i - 1], self.plan.settings, ready_s, phase_s, workers=[w.address],
                            allow_other_workers=False, pure=False, key=f"{names.prefix}-shard-{i}")
                   for i, w in enumerate(self.load, 1)]
        if self.server_worker is not None:
            conductor: Any = c.submit(tasks.conduct_here, names.prefix, n, ready_s, phase_s, self.server_pids or None,
                                      workers=[self.server_worker.address], allow_other_workers=False, pure=False,
                                      key=f"{names.prefix}-conductor")
        else:  # no worker on the server's host: the coordinator conducts (and reads no server)
            conductor = _Background(start.conduct, c, names, n, ready_s, phase_s, None)
        try:
            lost = self._wait(futures, conductor, ready_s + phase_s + RETURN_ALLOWANCE_S)
        except BaseException:
            start.abort(c, names, "the coordinator was interrupted")
            c.cancel(futures)
            raise
        if lost:
            start.abort(c, names, lost)
            c.cancel(futures)
        results = [self._result(i, f, rep) for i, f in enumerate(futures, 1)]
        verdict = self._verdict(conductor, lost)
        start.forget(c, names)
        samples = [r["sample"] for r in results]
        if verdict.get("verdict") != start.GO or lost:
            self.failure = self._barrier_failure(cell, rep, verdict, lost)
            samples = [self._failed(s, i, verdict, lost) for i, s in enumerate(samples, 1)]
        return samples, self._timing(results, verdict)

    def _wait(self, futures: list[Any], conductor: Any, limit_s: float) -> str | None:
        """Wait for every task; None, or why some never came back (a worker left, the limit)."""
        deadline = time.monotonic() + limit_s
        next_look = time.monotonic() + 1.0
        pending = [*futures, conductor]
        while True:
            pending = [f for f in pending if not f.done()]
            if not pending:
                return None
            now = time.monotonic()
            if now > deadline:
                late = [w.label for w, f in zip(self.load, futures) if not f.done()]
                return f"{', '.join(late) or 'the conductor'} did not come back within {limit_s:.0f} s"
            if now >= next_look and self.engine is not None:  # a worker that died never answers: say so now
                next_look = now + 1.0
                alive = set(self.engine.client.scheduler_info(n_workers=-1)["workers"])
                gone = [w.label for w in [*self.load, *([self.server_worker] if self.server_worker else [])]
                        if w.address not in alive]
                if gone:
                    return f"{', '.join(gone)} left the cluster"
            time.sleep(0.02)

    def _result(self, shard: int, future: Any, rep: int) -> dict[str, Any]:
        worker = self.load[shard - 1]
        if not future.done() or future.cancelled():
            return {"sample": Sample(rep=rep, error=f"shard {shard} ({worker.label}) did not come back"),
                    "go_wall": None, "end_wall": None}
        try:
            return dict(future.result())
        except concurrent.futures.CancelledError:  # we cancelled it: the repetition stopped
            return {"sample": Sample(rep=rep, error=f"shard {shard} ({worker.label}) did not come back"),
                    "go_wall": None, "end_wall": None}
        except Exception as exc:
            return {"sample": Sample(rep=rep, error=f"shard {shard} ({worker.label}): its task failed: "
                                                    f"{type(exc).__name__}: {exc}"),
                    "go_wall": None, "end_wall": None}

    def _verdict(self, conductor: Any, lost: str | None) -> dict[str, Any]:
        if not conductor.done():  # the run stops on ``lost``; whether the barrier was released is not known
            return {"verdict": None, "missing": [], "failed": {}}
        try:
            return dict(conductor.result())
        except Exception as exc:
            where = self.server_worker.label if self.server_worker else "the coordinator"
            return {"verdict": f"abort: the conductor on {where} failed: {type(exc).__name__}: {exc}",
                    "missing": [], "failed": {}}

    def _barrier_failure(self, cell: Cell, rep: int, verdict: dict[str, Any], lost: str | None) -> str:
        where = f"cluster run stopped at {cell.key} repetition {rep}"
        if verdict.get("verdict") in (start.GO, None):  # a shard, its worker or the conductor never came back
            return f"{where}: {lost}; nothing of that repetition was merged"
        culprits = [f"shard {i} ({self.load[i - 1].label}) was not ready within "
                    f"{self.request.ready_timeout_s:g} s" for i in verdict.get("missing", [])]
        culprits += [f"shard {i} ({self.load[int(i) - 1].label}) failed before the barrier: {why}"
                     for i, why in verdict.get("failed", {}).items()]
        if not culprits:
            culprits = [lost or str(verdict.get("verdict", "abort")).removeprefix("abort: ")]
        return (f"{where}: {'; '.join(culprits)}; the start barrier was not released, nothing of that repetition "
                "was merged")

    def _failed(self, sample: Sample, shard: int, verdict: dict[str, Any], lost: str | None) -> Sample:
        """Every shard's sample of a repetition that stopped the run is a failure (the
        culprit's names its host)."""
        worker = self.load[shard - 1]
        if shard in verdict.get("missing", []):
            why = f"not ready within {self.request.ready_timeout_s:g} s at the start barrier"
        elif str(shard) in verdict.get("failed", {}):
            why = f"failed before the start barrier: {verdict['failed'][str(shard)]}"
        elif verdict.get("verdict") in (start.GO, None):
            why = f"repetition stopped: {lost}"
        else:
            why = "start barrier not released (another shard was not ready)"
        sample.error = f"{worker.label}: {why}" + (f" [{sample.error}]" if sample.error else "")
        return sample

    def _timing(self, results: list[dict[str, Any]], verdict: dict[str, Any]) -> dict[str, Any]:
        """The start skew (largest difference between two shards' GO, each by its own
        wall clock), each shard's GO against the release, and how much the phases overlap."""
        gos = [r.get("go_wall") for r in results]
        ends = [r.get("end_wall") for r in results]
        info: dict[str, Any] = {"release_wall": verdict.get("release_wall"), "server": verdict.get("server")}
        if all(g is not None for g in gos):
            first = min(gos)  # type: ignore[type-var]
            info["start_skew_s"] = max(gos) - first  # type: ignore[type-var,operator]
            info["go_after_first_s"] = [g - first for g in gos]  # type: ignore[operator]
            release = verdict.get("release_wall")
            if release is not None:
                info["go_after_release_s"] = [g - release for g in gos]  # type: ignore[operator]
            if all(e is not None for e in ends):
                union = max(ends) - first  # type: ignore[type-var,operator]
                both = min(ends) - max(gos)  # type: ignore[type-var,operator]
                info["phases_overlap"] = max(0.0, both) / union if union > 0 else None
        return info

    # -- the files -------------------------------------------------------------------------

    def _refresh(self) -> None:
        """The merged run, again, from the shards' runs (merge.merge_shards), with what only
        the cluster knows: its settings and hosts, each repetition's skew, and the server's
        readings from its host."""
        if not self.shard_runs:
            return
        named = [(str(relative(self.shards_dir / f"shard-{i}.json")), run) for i, run in enumerate(self.shard_runs, 1)]
        merged = merge.merge_shards(named, self.argv)
        merged.environment = {**self.template.environment, "shards": [
            {**entry, "worker": w.to_json(), "clock": self.offsets.get(w.address),
             "cpu_model": run.environment.get("cpu_model"), "logical_cpus": run.environment.get("logical_cpus"),
             "kernel": run.environment.get("kernel"), "runtimes": run.environment.get("runtimes")}
            for entry, w, run in zip(merged.environment["shards"], self.load, self.shard_runs)]}
        merged.settings = {**merged.settings, "cluster": self._settings()}
        record = self.template.servers[self.server_program.name]
        merged.servers = {**merged.servers, record.name: copy.deepcopy(record)}
        for cell in merged.cells:
            for sample in cell.samples:
                info = self.barriers.get((cell.key, sample.rep))
                if info is not None:
                    _apply(sample, info)
        for f in fields(Run):
            setattr(self.merged, f.name, getattr(merged, f.name))

    def _settings(self) -> dict[str, Any]:
        assert self.engine is not None or self.shard_runs
        return {"engine": f"{ENGINE} {self.engine.version if self.engine else ''}".strip(),
                "address": self.request.address, "scheduler": self.engine.address if self.engine else None,
                "local": bool(self.engine and self.engine.local), "ready_timeout_s": self.request.ready_timeout_s,
                "load_workers": [{"shard": i, **w.to_json(), "clock": self.offsets.get(w.address)}
                                 for i, w in enumerate(self.load, 1)],
                "server_worker": None if self.server_worker is None else
                {**self.server_worker.to_json(), "clock": self.offsets.get(self.server_worker.address)},
                "server_pids": self.server_pids, "failure": self.failure}

    def _save_shards(self) -> None:
        for i, run in enumerate(self.shard_runs, 1):
            write_json(run, self.shards_dir / f"shard-{i}.json", summaries=False)


class _Background:
    """A call in a daemon thread, with the ``done``/``result`` of a future (a thread that is
    still waiting when the run ends must not hold the process)."""

    def __init__(self, call: Callable[..., Any], *args: Any) -> None:
        self._value: Any = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, args=(call, args), name="wsbench-conductor", daemon=True)
        self._thread.start()

    def _run(self, call: Callable[..., Any], args: tuple[Any, ...]) -> None:
        try:
            self._value = call(*args)
        except BaseException as exc:  # kept for result(): never a traceback on stderr
            self._error = exc

    def done(self) -> bool:
        return not self._thread.is_alive()

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value


def _apply(sample: Sample, info: dict[str, Any]) -> None:
    """A merged repetition gains its barrier's timing and the server's readings."""
    timing = {k: v for k, v in info.items() if k not in ("server", "release_wall") and v is not None}
    if "start_skew_s" in timing:
        sample.extra["start_skew_s"] = timing.pop("start_skew_s")
    if timing:
        sample.extra["barrier"] = timing
    server = info.get("server")
    if sample.error or not isinstance(server, dict):
        return
    sample.server_cpu_s = server.get("server_cpu_s")
    sample.server_peak_rss_kib = server.get("server_peak_rss_kib")
    sample.reading_errors = [*sample.reading_errors, *server.get("reading_errors", [])]


