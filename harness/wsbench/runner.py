"""Running a matrix of servers x clients x workloads, repeated and interleaved: the plan
(from the options of ``wsbench run`` and the suite's defaults), the run, and measuring it."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from .catalog import Catalog, Program, on_axis, tls_twins
from .errors import WsbenchError
from .jsonobj import read_object
from .measure import run_client
from .sweep import run_ramp, run_sweep
from .vanish import run_vanish
from .progress import Progress
from .model import Cell, ProgramRecord, Run, Sample, Settings, now, write_json
from .server import ServerHandle, start_server
from .target import ExternalServer, is_target
from .verify import verify_echo
from .checked import origins as checked_origins, summaries as checked_summaries
from .checked.origins import Sources
from .workloads import DEFAULT_SUITE, AXIS_MODES, Suite, Workload, WorkloadSet, suite_defaults
from . import certificates, deflate, environment, merge, newrun, pinning, target


@dataclass
class Plan:
    servers: list[Program]
    clients: list[Program]
    workloads: list[Workload]
    repetitions: int
    suite: Suite | None
    settings: Settings = Settings()
    target_pids: dict[str, int] = field(default_factory=dict)  # --target-pid: targets' processes here
    environment_extra: dict[str, Any] = field(default_factory=dict)  # added to the run's environment
    shard: tuple[int, int] | None = None  # --shard I/N: one of N load generators (wsbench merge)
    tls_values: dict[str, str] | None = None  # the certificates' placeholders (certificates.py), with --tls
    reference_only: frozenset[str] = frozenset()  # clients (catalog names) run against the reference server only
    conformance: Sources | None = None  # where the programs' conformance summaries come from (None: not recorded)


@dataclass(frozen=True)
class Request:
    """What ``wsbench run`` was asked for: its options, named as they are (None: the
    suite's choice, else the default)."""

    suite: str | None = None
    workload: list[str] | None = None
    runtime: list[str] | None = None
    server: list[str] | None = None
    client: list[str] | None = None
    repetitions: int | None = None
    min_seconds: float | None = None
    pin: bool = False
    verify: str = "on"
    target: list[str] | None = None
    target_pid: list[str] | None = None
    allow_remote: bool = False
    environment_from: Path | None = None
    shard: str | None = None
    tls: str | None = None
    tls_key: str = certificates.DEFAULT_KEY_TYPE
    deflate: str | None = None  # --deflate off|on|both (deflate.py); None: the suite's, else off
    conformance: list[str] | None = None  # --conformance: results files, auto, quick or off
    out: Path | None = None  # --out: where auto looks for results files of wsbench conformance


def plan(request: Request, catalog: Catalog, workloads: WorkloadSet) -> tuple[Plan, Catalog]:
    """The plan of a run: the suite (``quick`` unless workloads are named) and its
    defaults, the servers (or the targets: the catalog returned has them) and clients
    the options and the suite leave, and with ``--verify both`` each client's unchecked
    twin beside it."""
    suite_name = request.suite or (None if request.workload else DEFAULT_SUITE)
    suite, chosen = workloads.select(suite_name, request.workload)
    target_pids: dict[str, int] = {}
    if request.target:
        if request.server:
            raise WsbenchError("--target and --server exclude each other: a run measures either targets or "
                               "servers wsbench starts")
        catalog, servers = target.target_programs(request.target, catalog, request.allow_remote)
        target_pids = target.parse_pids(request.target_pid, {s.name for s in servers})
    elif request.target_pid or request.allow_remote:
        raise WsbenchError("--target-pid and --allow-remote go with --target")
    else:
        servers = catalog.select("server", request.server or (suite.programs("servers", catalog.servers)
                                                               if suite else None), request.runtime)
    clients = catalog.select("client", request.client or (suite.programs("clients", catalog.clients)
                                                           if suite else None), request.runtime)
    guests = _reference_clients(request, suite, catalog, clients)
    clients += guests
    if not servers or not clients:
        raise WsbenchError("the filters leave no " + ("server" if not servers else "client") + " to run")
    reps, min_seconds = suite_defaults(suite, request.repetitions, request.min_seconds)
    servers, tls_settings, tls_values = _tls_axis(request, suite, servers)
    deflate_mode = request.deflate or (suite.deflate if suite and suite.deflate else "off")
    if deflate_mode != "off" and request.target:
        raise WsbenchError("--deflate starts servers with permessage-deflate on; a --target is measured as it runs")
    servers, deflate_settings = deflate.deflate_axis(deflate_mode, servers)
    settings = Settings(min_seconds=min_seconds, verify=request.verify,
                        pinning=pinning.plan() if request.pin else None, tls=tls_settings, deflate=deflate_settings)
    if request.verify == "both":
        clients = [twin for c in clients for twin in (c, c.unchecked_twin())]
    extra = _environment_from(request.environment_from) if request.environment_from else {}
    shard = merge.parse_shard(request.shard) if request.shard else None
    if shard:
        merge.refuse_unsharded(chosen, "--shard")
    sources = checked_origins.parse(request.conformance, request.out) if request.out is not None else None
    return Plan(servers, clients, chosen, reps, suite, settings, target_pids, extra, shard, tls_values,
                frozenset(g.name for g in guests), sources), catalog


def _reference_clients(request: Request, suite: Suite | None, catalog: Catalog,
                       clients: list[Program]) -> list[Program]:
    """The suite's reference clients (each against the reference server only) the run adds:
    none when the command line names clients, or when it measures --target servers."""
    if not suite or not suite.reference_clients or request.client or request.target:
        return []
    if catalog.reference_server is None:
        raise WsbenchError(f"{suite.source}: suite '{suite.name}' names reference_clients, and "
                           "harness/runtimes.toml names no reference server")
    return [c for c in catalog.select("client", list(suite.reference_clients), request.runtime)
            if c not in clients]


def _tls_axis(request: Request, suite: Suite | None,
              servers: list[Program]) -> tuple[list[Program], dict[str, Any] | None, dict[str, str] | None]:
    """The run's TLS axis: --tls, else the suite's, else off (a --target runs as it is)."""
    mode = request.tls or (suite.tls if suite and suite.tls else "off")
    if mode != "off" and request.target:
        raise WsbenchError("--tls measures servers wsbench starts in TLS mode; a --target is measured as it "
                           "runs (ws://)")
    return tls_axis(mode, request.tls_key, servers)


def tls_axis(mode: str, key_type: str,
             servers: list[Program]) -> tuple[list[Program], dict[str, Any] | None, dict[str, str] | None]:
    """The servers over the TLS axis: each as it is (off), its TLS twin NAME/wss instead
    (on), or both side by side (both); with what the run records of it (settings.tls) and
    the certificates' placeholders for the clients of the twins."""
    if mode not in AXIS_MODES:
        raise WsbenchError(f"--tls must be one of {', '.join(AXIS_MODES)}, got '{mode}'")
    if mode == "off":
        return servers, None, None
    entry = certificates.key_entry(key_type)
    certs = certificates.load_certs()
    values = certs.values(entry)
    twins = tls_twins(servers, values)
    return on_axis(mode, servers, twins), {"mode": mode, **certs.describe(entry)}, values


def _environment_from(path: Path) -> dict[str, object]:
    return read_object(path, f"--environment-from {path}")


def interleaved(cells: list[Cell], repetitions: int) -> list[tuple[int, Cell]]:
    """Every cell once per repetition, the order rotated between repetitions so slow drift
    of the machine spreads over all cells instead of hitting the last ones."""
    n = len(cells)
    shift = max(1, n // repetitions) if n else 0
    order: list[tuple[int, Cell]] = []
    for rep in range(repetitions):
        start = (rep * shift) % n if n else 0
        order.extend((rep + 1, c) for c in cells[start:] + cells[:start])
    return order


def in_scope(workload: Workload, server: Program, client: Program, scoped: bool,
             catalog: Catalog) -> bool:
    """Whether the pair belongs to the workload's matrix in this suite."""
    if not scoped or workload.scope is None:
        return True
    versus_reference_server = server.catalog_name == catalog.reference_server
    driven_by_reference_client = client.name == catalog.reference_client
    if workload.scope == "clients":
        return versus_reference_server
    if workload.scope == "servers":
        return driven_by_reference_client
    return versus_reference_server or driven_by_reference_client


def not_applicable(workload: Workload, server: Program, client: Program) -> str | None:
    """Why the pair cannot express the workload (reported as n/a, not as a failure)."""
    why = server.cannot(workload.kind, workload.server_features)
    if why:
        return f"server {server.name} {why}"
    why = (client.unbuilt() or client.cannot(workload.kind, workload.client_features)
           or (client.cannot_tls() if server.secure else None))
    return f"client {client.name} {why}" if why else deflate.not_applicable(server, client, workload)


def make_cells(plan: Plan, catalog: Catalog) -> list[Cell]:
    """The pairs of each workload; scopes apply within a scoped suite only (a run that names
    workloads without a suite gets every selected pair). A workload that means something over
    wss:// only (tls_only: session resumption) has cells with the servers' TLS twins only; a
    suite's reference client (reference_clients) has cells with the reference server only."""
    scoped = plan.suite.scoped if plan.suite else False
    return [Cell(w.name, s.name, c.name, na=not_applicable(w, s, c))
            for w in plan.workloads for s in plan.servers for c in plan.clients
            if in_scope(w, s, c, scoped, catalog) and (s.secure or not w.tls_only)
            and (c.catalog_name not in plan.reference_only or s.catalog_name == catalog.reference_server)]


def new_run(plan: Plan, catalog: Catalog, argv: list[str]) -> Run:
    cells = make_cells(plan, catalog)
    if not cells:
        raise WsbenchError("no server/client pair is left: the workloads' scopes (workloads/*.toml) "
                           "exclude every selected pair; name the workloads without --suite, or use --suite full")
    run = newrun.new_run(catalog, argv, plan.servers, plan.clients,
                         {**plan.settings.to_json(), "shard": list(plan.shard) if plan.shard else None},
                         workloads=plan.workloads, cells=cells, suite=plan.suite.name if plan.suite else None,
                         repetitions=plan.repetitions, environment_extra=plan.environment_extra,
                         server_record=lambda s: _server_record(s, plan))
    if plan.settings.deflate:
        for client in plan.clients:
            run.clients[client.name].deflate = deflate.record(client)
    return run


def _server_record(p: Program, plan: Plan) -> ProgramRecord:
    record = newrun.record(p)
    if p.secure:
        record.tls = plan.settings.tls and {k: v for k, v in plan.settings.tls.items() if k != "mode"}
    if p.compressed:
        record.deflate = deflate.record(p)
    if is_target(p):
        record.target = p.command[0]
        record.readings = ExternalServer(p, Path(), plan.target_pids.get(p.name)).readings
    elif not _started(p):
        record.readings = "not started: its cells are n/a (it cannot compress)"
    else:
        record.readings = "the server's own process (started by wsbench): CPU-time clock and VmHWM from /proc"
    return record


def _started(server: Program) -> bool:
    """Whether the run starts ``server``: not a deflate twin that cannot compress (its cells are n/a)."""
    return not (server.compressed and deflate.cannot_deflate(server))


Repetition = Callable[[int, Cell], Sample]  # measures repetition N of a cell, records its sample, returns it


def measure_cells(run: Run, todo: list[tuple[int, Cell]], repetitions: int, repetition: Repetition,
                  results: Path, progress: Progress, suffix: str = "",
                  stopped: Callable[[], str | None] = lambda: None) -> bool:
    """The one loop of every measured run, on one host or on a cluster: each (repetition,
    cell) of ``todo`` in its interleaved order, measured by ``repetition``, then the run file
    ``results`` written as it stands (without the summaries, which are bootstrapped once at
    the end), so that an interrupted run keeps every repetition it measured. Stops early
    when ``stopped`` says why; True when every repetition ran."""
    progress.total = len(todo)
    for rep, cell in todo:
        progress.step(f"{cell.workload} server={cell.server} client={cell.client}{suffix}", rep, repetitions)
        sample = repetition(rep, cell)
        if sample.error:
            progress.note(f"! {sample.error}")
        progress.advance()
        write_json(run, results, summaries=False)
        if stopped():
            return False
    return True


def execute(plan: Plan, run: Run, log_dir: Path, results: Path, progress: Progress) -> Run:
    """Start and verify servers, record what each program checks of RFC 6455 (checked/,
    when the plan says where from), then measure every cell (``measure_cells``), writing
    the run file ``results`` after each sample and once more at the end, complete or not."""
    running: dict[str, ServerHandle] = {}
    log_dir.mkdir(parents=True, exist_ok=True)
    try:
        for server in filter(_started, plan.servers):
            live = _start_verified(server, run.servers[server.name], log_dir, progress, plan.settings,
                                   plan.target_pids)
            if live:
                running[server.name] = live
        for cell in run.cells:
            record = run.servers[cell.server]
            if record.status != "ok":
                cell.blocked = f"server '{cell.server}' {record.error}"
        for client in plan.clients:
            missing = [] if client.unbuilt() else client.missing()  # (unbuilt: its cells are n/a)
            if missing:
                run.clients[client.name].status = "failed"
                run.clients[client.name].error = f"{missing[0]} is missing; run: make setup"
                for cell in run.cells:
                    if cell.client == client.name and not cell.blocked:
                        cell.blocked = f"client '{client.name}': {missing[0]} is missing; run: make setup"
        if plan.conformance is not None:
            checked_summaries.record_all(run, list(filter(_started, plan.servers)), plan.clients, plan.conformance,
                                         log_dir, progress)
        clients = {c.name: c for c in plan.clients}
        secure_clients = {c.name: c.over_tls(plan.tls_values) for c in plan.clients
                          if plan.tls_values is not None and c.tls is not None}
        workloads = {w.name: w for w in plan.workloads}

        def repetition(rep: int, cell: Cell) -> Sample:
            workload = workloads[cell.workload]
            measure = (run_sweep if workload.sweep else run_ramp if workload.ramp
                       else run_vanish if workload.vanish else run_client)
            server = running[cell.server]
            client = (secure_clients if server.program.secure else clients)[cell.client]
            client = deflate.with_deflate(client, workload) if server.program.compressed else client
            if workload.fresh_server and not is_target(server.program):
                sample = _on_a_fresh_server(measure, client, server, workload, rep, log_dir, plan.settings)
            else:
                sample = measure(client, server, workload, rep, log_dir, plan.settings)
            cell.samples.append(sample)
            return sample

        todo = [(rep, c) for rep, c in interleaved(run.cells, plan.repetitions) if not c.blocked and not c.na]
        run.complete = measure_cells(run, todo, plan.repetitions, repetition, results, progress)
    finally:
        for name, live in running.items():
            problem = live.stop()
            if problem:
                run.servers[name].error = run.servers[name].error or f"could not be stopped: {problem}"
                progress.note(f"! server '{name}' could not be stopped: {problem}")
        run.finished = now()
        run.environment["load_average_after"] = environment.load_average()
        progress.finish()
        write_json(run, results, summaries=False)
    return run


def _on_a_fresh_server(measure: Callable[..., Sample], client: Program, server: ServerHandle,
                       workload: Workload, rep: int, log_dir: Path, settings: Settings) -> Sample:
    """One sample against a server started for it alone (verified when the run began, as
    the same program), stopped after it: its memory holds nothing of earlier cells."""
    program = server.program  # with the workload's own arguments (server_args), if any
    if workload.server_args:
        program = replace(program, command=(*program.command, *workload.server_args))
    try:
        fresh = start_server(program, log_dir / "fresh", settings.pinning.server if settings.pinning else None)
    except WsbenchError as exc:
        return Sample(rep=rep, error=f"a fresh server for '{workload.name}': {exc}")
    try:
        sample = measure(client, fresh, workload, rep, log_dir, settings)
        if workload.server_args:
            sample.extra["server_args"] = list(workload.server_args)
        return sample
    finally:
        problem = fresh.stop()
        if problem:
            raise WsbenchError(f"server '{server.program.name}' (fresh, for {workload.name}) could not be stopped: "
                               f"{problem}")


def _start_verified(server: Program, record: ProgramRecord, log_dir: Path,
                    progress: Progress, settings: Settings, target_pids: dict[str, int]) -> ServerHandle | None:
    """Start the server (a --target is already running) and verify its echo; the same
    verification for both, and a server or target that fails it is not measured."""
    live: ServerHandle
    if is_target(server):
        live = ExternalServer(server, log_dir / f"target-{server.name}.log", target_pids.get(server.name))
        where = f"target {live.url()}"
    else:
        try:
            live = start_server(server, log_dir, settings.pinning.server if settings.pinning else None)
        except WsbenchError as exc:
            record.status, record.error = "failed", "did not start: " + str(exc).split(": ", 1)[-1]
            progress.note(f"! {exc}")
            return None
        where = f"ready on port {live.port}"
        record.info = live.info
        unmet = server.unmet(live.info, "WSBENCH-INFO line")
        if unmet:
            live.stop()
            record.status, record.error = "failed", f"is not what the catalog says: {unmet}"
            progress.note(f"! server '{server.name}' {record.error}")
            return None
    check = verify_echo(live.url(), certificates.client_context(certificates.load_certs()) if server.secure else None)
    record.checks = check.checks
    if not check.ok:
        live.stop()
        refused = "; refused, nothing is measured against it" if is_target(server) else ""
        record.status, record.error = "failed", f"failed verification: {check.error}{refused}"
        progress.note(f"! server '{server.name}' failed verification: {check.error}{refused}")
        return None
    if settings.pinning and live.pid is not None:
        record.cpus = pinning.allowed(live.pid)
    progress.note(f"server {server.name}: {where}, echo verified ({len(check.checks)} checks); "
                  f"CPU and RSS: {record.readings}")
    return live
