"""Command line: ``wsbench run``, ``list``, ``verify``, ``report``, ``compare``,
``stability``, ``conformance``, ``profile``, ``startup`` and ``gate``."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import sys
from pathlib import Path
from typing import Callable, NoReturn, Sequence, TypeVar

from . import __version__, compare, merge, pinning, procs, report, stability, target
from .catalog import Catalog, load_catalog
from .conformance import cases as conformance_cases, runner as conformance_runner
from .errors import WsbenchError
from .gate import baseline as gate_baseline, session as gate_session
from .gate.cells import CELLS as GATE_CELLS
from .paths import PROFILES_DIR, REPORTS_DIR, RUNTIMES_FILE, WORKLOADS_DIR, relative
from .profile import session as profile_session, startup, tools as profile_tools
from .profile.cell import CellPlan
from .profile.flamegraph import diff_svg
from .profile.record import DEFAULT_FREQUENCY
from .profile.session import MATRIX_WORKLOADS
from .progress import Progress
from .results import Run, Settings, read_json, write_json
from .runner import Plan, execute, new_run
from .server import start_server
from .report.table import render_markdown
from .verify import verify_echo
from .workloads import Suite, load_workloads

DEFAULT_MIN_SECONDS = 1.0
DEFAULT_JOBS = 4
DEFAULT_PROFILE_SECONDS = 2.0
EXIT_FAILED_CELLS = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wsbench", description="Benchmark WebSocket runtimes against each other, honestly.")
    parser.add_argument("--version", action="version", version=f"wsbench {__version__}")
    parser.add_argument("--catalog", type=Path, default=RUNTIMES_FILE,
                        help="runtimes file (default: harness/runtimes.toml)")
    parser.add_argument("--workloads-dir", type=Path, default=WORKLOADS_DIR,
                        help="directory of workload and suite files (default: workloads/)")
    sub = parser.add_subparsers(dest="command", required=True)

    run = sub.add_parser("run", help="measure servers x clients x workloads")
    run.add_argument("--suite", help="suite from workloads/*.toml (default: quick, unless --workload is given)")
    run.add_argument("--workload", "-w", action="append", help="workload name (repeatable)")
    run.add_argument("--runtime", "-r", action="append", help="keep servers and clients of this runtime (repeatable)")
    run.add_argument("--server", "-s", action="append", help="server name (repeatable)")
    run.add_argument("--client", "-c", action="append", help="client name (repeatable)")
    run.add_argument("--repetitions", "-n", type=int, help="repetitions per cell (default: the suite's)")
    run.add_argument("--min-seconds", type=float, metavar="S",
                     help=f"shortest measured phase: bursts repeat until it has passed (default: the "
                          f"suite's, else {DEFAULT_MIN_SECONDS:g}; latency and open-loop workloads keep their length)")
    run.add_argument("--pin", action="store_true",
                     help="run client and server on separate cores (sched_setaffinity); recorded with the run")
    run.add_argument("--verify", choices=("on", "off", "both"), default="on",
                     help="off: clients check no echo; both: every client also runs unchecked beside itself "
                          "and the tables show what the checks cost (for that measurement only)")
    run.add_argument("--target", action="append", metavar="[NAME=]ws://HOST:PORT/PATH",
                     help="measure a server wsbench did not start (repeatable), after the same verification; "
                          "NAME of a catalog server keeps its features; server CPU and RSS are n/a (external)")
    run.add_argument("--target-pid", action="append", metavar="[NAME=]PID",
                     help="read a target's CPU and RSS from this process on this machine (/proc/PID)")
    run.add_argument("--allow-remote", action="store_true",
                     help="accept a --target that is not a loopback address (its figures include the network)")
    run.add_argument("--environment-from", type=Path, metavar="FILE",
                     help="a JSON object added to the run's environment section (make bench-docker: images, "
                          "CPU limits)")
    run.add_argument("--shard", metavar="I/N",
                     help="this run is shard I of N load generators run at the same time against one server "
                          "(recorded; combine the files with wsbench merge; docs/scaling.md)")
    run.add_argument("--out", type=Path, default=REPORTS_DIR, help="directory for the JSON and Markdown results")
    run.add_argument("--quiet", "-q", action="store_true", help="no progress lines")

    mrg = sub.add_parser("merge", help="merge the shards of one plan (wsbench run --shard I/N): throughputs sum")
    mrg.add_argument("files", type=Path, nargs="+", help="the shards' reports/*.json files")
    mrg.add_argument("-o", "--out", type=Path, required=True, metavar="FILE", help="the merged run file (.json)")

    sub.add_parser("list", help="show runtimes, servers, clients, workloads and suites")

    verify = sub.add_parser("verify", help="start servers and check them against the echo contract")
    verify.add_argument("--server", "-s", action="append", help="server name (repeatable)")

    rep = sub.add_parser("report", help="render a saved run: Markdown, HTML with charts, CSV or JSON")
    rep.add_argument("file", type=Path, help="a reports/*.json file")
    rep.add_argument("--format", "-f", action="append", metavar="FORMAT",
                     help=f"{', '.join(report.FORMATS)} (default md); repeatable or comma-separated")
    rep.add_argument("-o", "--out", type=Path, metavar="DIR",
                     help="write the files into DIR (" + ", ".join(report.FORMATS.values()) + ") instead of "
                          "printing one format")
    rep.add_argument("--screenshot", action="store_true",
                     help="with -o and html: open index.html in headless Chromium, fail on console errors or "
                          "charts without a size, and save DIR/screenshot.png")

    cmp = sub.add_parser("compare", help="what changed between two saved runs, cell by cell (exit code: "
                                         "0 same, 1 worse, 3 better only, 4 untestable)")
    cmp.add_argument("a", type=Path, help="the run before (reports/*.json)")
    cmp.add_argument("b", type=Path, help="the run after")
    cmp.add_argument("--format", "-f", default="md", metavar="FORMAT", help="md (default) or html")
    cmp.add_argument("-o", "--out", type=Path, metavar="FILE", help="write to FILE instead of printing")

    stab = sub.add_parser("stability", help="spread per cell of saved runs, and whether runs agree")
    stab.add_argument("files", type=Path, nargs="+", help="reports/*.json files (of the same matrix, to compare)")

    conf = sub.add_parser("conformance", help="every client against the RFC 6455 conformance cases (raw-frame peer)")
    conf.add_argument("--client", "-c", action="append", help="client name (repeatable; default: every default client)")
    conf.add_argument("--case", action="append", help="case id (repeatable; default: all; `wsbench list` shows them)")
    conf.add_argument("--jobs", "-j", type=int, default=DEFAULT_JOBS,
                      help=f"client processes at a time (default {DEFAULT_JOBS})")
    conf.add_argument("--out", type=Path, default=REPORTS_DIR, help="directory for the JSON and Markdown results")
    conf.add_argument("--quiet", "-q", action="store_true", help="no progress lines")

    prof = sub.add_parser("profile", help="perf flamegraphs, CPU profiles and where-the-time-goes tables of cells "
                                          "(a profiled run: never ranked)")
    prof.add_argument("--workload", "-w", action="append", help="workload name (repeatable)")
    prof.add_argument("--client", "-c", action="append", help="client name (repeatable)")
    prof.add_argument("--server", "-s", action="append", help="server name (repeatable)")
    prof.add_argument("--side", choices=("client", "server", "both", "auto"), default="auto",
                      help="which process to profile (auto: the one that is not the reference program; both "
                           "when both are)")
    prof.add_argument("--matrix", action="store_true",
                      help="every client against the reference server and every server driven by the reference "
                           "client (default workloads: " + ", ".join(MATRIX_WORKLOADS) + "; make profile)")
    prof.add_argument("--min-seconds", type=float, default=DEFAULT_PROFILE_SECONDS, metavar="S",
                      help=f"shortest measured phase (default {DEFAULT_PROFILE_SECONDS:g})")
    prof.add_argument("--frequency", "-F", type=int, default=DEFAULT_FREQUENCY, metavar="HZ",
                      help=f"perf samples per second (default {DEFAULT_FREQUENCY})")
    prof.add_argument("--overhead-runs", type=int, default=1, metavar="N",
                      help="alternate the unprofiled and perf passes N times; the overhead compares their medians "
                           "(default 1)")
    prof.add_argument("--startup", action="store_true", help="also time start-up (as wsbench startup) into the "
                                                             "same results")
    prof.add_argument("--diff", nargs=2, type=Path, metavar=("A", "B"),
                      help="instead: a differential flamegraph from profile A to profile B (cell directories "
                           "or .folded files of the same cell)")
    prof.add_argument("-o", "--output", type=Path, metavar="FILE", help="--diff: the SVG (default: beside B)")
    prof.add_argument("--out", type=Path, default=PROFILES_DIR, help="directory for the profiles (default profiles/)")
    prof.add_argument("--reports", type=Path, default=REPORTS_DIR, help="directory for the results JSON and Markdown")
    prof.add_argument("--quiet", "-q", action="store_true", help="no progress lines")

    up = sub.add_parser("startup", help="start-up time of clients (connect, echo 11 B, close, exit) and servers "
                                        "(exec to readiness) with hyperfine")
    up.add_argument("--client", "-c", action="append", help="client name (repeatable; default: every default client)")
    up.add_argument("--server", "-s", action="append", help="server name (repeatable; default: every default server)")
    up.add_argument("--warmup", type=int, default=startup.DEFAULT_WARMUP, help="hyperfine --warmup")
    up.add_argument("--runs", type=int, default=startup.DEFAULT_RUNS, help="hyperfine --runs")
    up.add_argument("--reports", type=Path, default=REPORTS_DIR, help="directory for the results JSON and Markdown")
    up.add_argument("--quiet", "-q", action="store_true", help="no progress lines")

    gate = sub.add_parser("gate", help="regression gate: instruction counts (callgrind) and confirmed wall-clock "
                                       "ratios against the baseline (exit 0 pass, 1 regression, 2 cannot run)")
    gate.add_argument("--baseline", type=Path, default=gate_baseline.DEFAULT_PATH,
                      help="the baseline file (default: baselines/gate.json)")
    gate.add_argument("--update", action="store_true",
                      help="measure and write the baseline instead of gating (the deterministic counts of both "
                           "profiles; the wall-clock ratios, with --calibrate N also their thresholds)")
    gate.add_argument("--only", choices=gate_session.GATES, help="run one gate only")
    gate.add_argument("--quick", action="store_true",
                      help="deterministic gate on the reduced message counts (make test)")
    gate.add_argument("--cell", action="append", metavar="NAME",
                      help="deterministic cells only (program/workload, a program or a workload; repeatable): "
                           + ", ".join(c.name for c in GATE_CELLS))
    gate.add_argument("--calibrate", type=int, default=0, metavar="N",
                      help="with --update: N wall-clock runs of the unchanged code set the thresholds")
    gate.add_argument("--wall-run", type=Path, metavar="FILE",
                      help="judge (or, with --update, store) the ratios of this saved run instead of measuring")
    gate.add_argument("--out", type=Path, default=REPORTS_DIR, help="directory for the reports")
    gate.add_argument("--quiet", "-q", action="store_true", help="no progress lines")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        if args.command == "run":
            return cmd_run(args, list(sys.argv if argv is None else ["wsbench", *argv]))
        if args.command == "list":
            return cmd_list(args)
        if args.command == "verify":
            return cmd_verify(args)
        if args.command == "conformance":
            return cmd_conformance(args, list(sys.argv if argv is None else ["wsbench", *argv]))
        if args.command == "profile":
            return cmd_profile(args, list(sys.argv if argv is None else ["wsbench", *argv]))
        if args.command == "startup":
            return cmd_startup(args, list(sys.argv if argv is None else ["wsbench", *argv]))
        if args.command == "stability":
            print(stability.render([(f, read_json(f)) for f in args.files]))
            return 0
        if args.command == "compare":
            return cmd_compare(args)
        if args.command == "gate":
            return cmd_gate(args, list(sys.argv if argv is None else ["wsbench", *argv]))
        if args.command == "merge":
            return cmd_merge(args, list(sys.argv if argv is None else ["wsbench", *argv]))
        return cmd_report(args)
    except WsbenchError as exc:
        print(f"wsbench: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("wsbench: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        procs.kill_all()


def _raise_interrupt(signum: int, frame: object) -> NoReturn:
    raise KeyboardInterrupt


def cmd_run(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    workloads = load_workloads(args.workloads_dir)
    suite_name = args.suite or (None if args.workload else "quick")
    suite, chosen = workloads.select(suite_name, args.workload)
    target_pids: dict[str, int] = {}
    if args.target:
        if args.server:
            raise WsbenchError("--target and --server exclude each other: a run measures either targets or "
                               "servers wsbench starts")
        catalog, servers = target.target_programs(args.target, catalog, args.allow_remote)
        target_pids = target.parse_pids(args.target_pid, {s.name for s in servers})
    elif args.target_pid or args.allow_remote:
        raise WsbenchError("--target-pid and --allow-remote go with --target")
    else:
        servers = catalog.select("server", args.server or _suite_list(suite, "servers", catalog), args.runtime)
    clients = catalog.select("client", args.client or _suite_list(suite, "clients", catalog), args.runtime)
    if not servers or not clients:
        raise WsbenchError("the filters leave no " + ("server" if not servers else "client") + " to run")
    reps = args.repetitions or (suite.repetitions if suite else 3)
    if reps < 1:
        raise WsbenchError(f"--repetitions must be at least 1, got {reps}")
    min_seconds = args.min_seconds
    if min_seconds is None:
        min_seconds = suite.min_seconds if suite and suite.min_seconds is not None else DEFAULT_MIN_SECONDS
    if not 0 <= min_seconds <= 600:
        raise WsbenchError(f"--min-seconds must be between 0 and 600, got {min_seconds:g}")
    settings = Settings(min_seconds=min_seconds, verify=args.verify,
                        pinning=pinning.plan() if args.pin else None)
    if args.verify == "both":
        clients = [twin for c in clients for twin in (c, c.unchecked_twin())]
    plan = Plan(servers, clients, chosen, reps, suite, settings, target_pids,
                _environment_from(args.environment_from) if args.environment_from else {},
                merge.parse_shard(args.shard) if args.shard else None)
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / f"run-{stamp}.json", out / f"run-{stamp}.md"
    log_dir = out / "logs" / stamp

    run = new_run(plan, catalog, argv)
    progress = Progress(total=0, quiet=args.quiet)
    progress.note(f"wsbench: {len(servers)} servers x {len(clients)} clients x {len(chosen)} workloads, "
                  f"{reps} repetitions; results: {relative(json_path)}")
    _execute_and_report(lambda: execute(plan, run, log_dir, lambda r: write_json(r, json_path, summaries=False),
                                        progress), run, json_path, md_path)
    for record in run.servers.values():
        if record.target and record.status == "failed":
            print(f"wsbench: target {record.target} {record.error}", file=sys.stderr)
    return EXIT_FAILED_CELLS if _any_failure(run) else 0


def _environment_from(path: Path) -> dict[str, object]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        raise WsbenchError(f"--environment-from {path}: file not found") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise WsbenchError(f"--environment-from {path}: not readable JSON ({exc})") from None
    if not isinstance(data, dict):
        raise WsbenchError(f"--environment-from {path}: not a JSON object")
    return data


def _execute_and_report(body: Callable[[], object], run: Run, json_path: Path, md_path: Path) -> None:
    """Run ``body``, then write the results (JSON with the summaries, and Markdown) and
    print the tables, also after Ctrl-C, which is raised again afterwards."""
    interrupted = False
    try:
        body()
    except KeyboardInterrupt:
        interrupted = True
    write_json(run, json_path)
    markdown = render_markdown(run)
    md_path.write_text(markdown)
    print(markdown)
    print(f"results: {relative(json_path)} and {relative(md_path)}", file=sys.stderr)
    if interrupted:
        raise KeyboardInterrupt


def _suite_list(suite: Suite | None, kind: str, catalog: Catalog) -> list[str] | None:
    """The servers or clients a suite names for itself (checked against the catalog)."""
    names = getattr(suite, kind) if suite else None
    if suite is None or names is None:
        return None
    known = catalog.servers if kind == "servers" else catalog.clients
    for name in names:
        if name not in known:
            raise WsbenchError(f"{suite.source}: suite '{suite.name}' names unknown {kind[:-1]} '{name}'")
    return list(names)


def _any_failure(run: Run) -> bool:
    return any(c.status not in ("ok", "n/a") for c in run.cells)


def cmd_list(args: argparse.Namespace) -> int:
    catalog = load_catalog(args.catalog)
    workloads = load_workloads(args.workloads_dir)
    print("runtimes:")
    for rt in catalog.runtimes.values():
        print(f"  {rt.name:<18} {rt.label}")
    for kind, table in (("servers", catalog.servers), ("clients", catalog.clients)):
        print(f"{kind}:")
        for p in table.values():
            state = "ready" if not p.missing() else f"not built ({p.missing()[0]}; run: make setup)"
            extra = "" if p.default else " (only when named)"
            print(f"  {p.name:<18} {p.label:<44} {state}{extra}")
    print("workloads:")
    for w in workloads.workloads.values():
        print(f"  {w.name:<18} {w.description}")
    print("suites:")
    for s in workloads.suites.values():
        print(f"  {s.name:<18} {s.description}")
    print("conformance cases (wsbench conformance --case ID):")
    for case in conformance_cases.CASES:
        print(f"  {case.id:<24} {case.section:<6} {case.title}")
    return 0


def cmd_verify(args: argparse.Namespace) -> int:
    catalog: Catalog = load_catalog(args.catalog)
    failed = 0
    for server in catalog.select("server", args.server, None):
        try:
            live = start_server(server, REPORTS_DIR / "logs" / "verify")
        except WsbenchError as exc:
            print(f"FAIL {server.name}: {exc}")
            failed += 1
            continue
        try:
            check = verify_echo(live.url())
        finally:
            live.stop()
        if check.ok:
            print(f"ok   {server.name}: {len(check.checks)} echoes byte-exact ({', '.join(check.checks)})")
        else:
            print(f"FAIL {server.name}: {check.error}")
            failed += 1
    return EXIT_FAILED_CELLS if failed else 0


def cmd_conformance(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    clients = catalog.select("client", args.client, None)
    try:
        chosen = conformance_cases.select(args.case)
    except KeyError as exc:
        raise WsbenchError(f"unknown case '{exc.args[0]}' (`wsbench list` shows the "
                           f"{len(conformance_cases.CASES)} cases)") from None
    if not 1 <= args.jobs <= 64:
        raise WsbenchError(f"--jobs must be between 1 and 64, got {args.jobs}")
    if not clients:
        raise WsbenchError("no client to run")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    json_path, md_path = out / f"conformance-{stamp}.json", out / f"conformance-{stamp}.md"
    run = conformance_runner.new_run(clients, chosen, catalog, argv, args.jobs)
    progress = Progress(total=0, quiet=args.quiet)
    progress.note(f"wsbench conformance: {len(chosen)} cases x {len(clients)} clients, {args.jobs} at a time; "
                  f"results: {relative(json_path)}")
    _execute_and_report(lambda: conformance_runner.execute(
        clients, chosen, run, out / "logs" / stamp, args.jobs, progress,
        lambda r: write_json(r, json_path, summaries=False)), run, json_path, md_path)
    return EXIT_FAILED_CELLS if any(r.error for r in run.clients.values()) else 0


def cmd_profile(args: argparse.Namespace, argv: list[str]) -> int:
    if args.diff:
        return _profile_diff(args)
    catalog = load_catalog(args.catalog)
    workloads = load_workloads(args.workloads_dir)
    names = args.workload or (list(MATRIX_WORKLOADS) if args.matrix else None)
    if not names:
        raise WsbenchError("name the cell: -w WORKLOAD -c CLIENT -s SERVER (or --matrix)")
    _, chosen = workloads.select(None, names)
    if args.matrix:
        clients = catalog.select("client", args.client, None)
        servers = catalog.select("server", args.server, None)
        plans = profile_session.matrix(catalog, chosen, clients, servers, args.side)
    else:
        if not args.client or not args.server:
            raise WsbenchError("name the cell: -w WORKLOAD -c CLIENT -s SERVER (or --matrix)")
        clients = catalog.select("client", args.client, None)
        servers = catalog.select("server", args.server, None)
        plans = []
        for w in chosen:
            for s in servers:
                for c in clients:
                    why = s.cannot(w.kind, w.server_features) or c.cannot(w.kind, w.client_features)
                    if why:
                        raise WsbenchError(f"{w.name}/{s.name}/{c.name} cannot be run: {why}")
                    plans.append(CellPlan(w, s, c, profile_session.sides_for(args.side, s, c, catalog)))
    if not plans:
        raise WsbenchError("no cell to profile")
    if not 0 <= args.min_seconds <= 600:
        raise WsbenchError(f"--min-seconds must be between 0 and 600, got {args.min_seconds:g}")
    if not 1 <= args.overhead_runs <= 20:
        raise WsbenchError(f"--overhead-runs must be between 1 and 20, got {args.overhead_runs}")
    if not 1 <= args.frequency <= 20000:
        raise WsbenchError(f"--frequency must be between 1 and 20000, got {args.frequency}")
    profile_tools.require(*profile_tools.PROFILE_TOOLS, *(("hyperfine",) if args.startup else ()))
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    out_root: Path = args.out / stamp
    args.reports.mkdir(parents=True, exist_ok=True)
    json_path, md_path = args.reports / f"profile-{stamp}.json", args.reports / f"profile-{stamp}.md"
    settings = Settings(min_seconds=args.min_seconds)
    run = profile_session.new_run(catalog, plans, clients if args.startup else [], servers if args.startup else [],
                                  argv, {"min_seconds": args.min_seconds, "verify": "on", "pinning": None,
                                         "frequency_hz": args.frequency, "overhead_runs": args.overhead_runs})
    progress = Progress(total=0, quiet=args.quiet)
    progress.note(f"wsbench profile: {len(plans)} cells; profiles: {relative(out_root)}; results: "
                  f"{relative(json_path)}")
    save = lambda r: write_json(r, json_path, summaries=False)  # noqa: E731

    def body() -> None:
        profile_session.profile_all(run, plans, out_root, settings, args.frequency, progress.note, save,
                                    args.overhead_runs)
        if args.startup:
            profile_session.startup_all(run, catalog, clients, servers, startup.DEFAULT_WARMUP,
                                        startup.DEFAULT_RUNS, out_root / "startup", progress.note, save)
        run.complete = True

    _profile_report(body, run, json_path, md_path)
    failed = [c for c in (run.profiles or {}).get("cells", []) if c.get("error")]
    return EXIT_FAILED_CELLS if failed else 0


def _profile_report(body: Callable[[], object], run: Run, json_path: Path, md_path: Path) -> None:
    """Run ``body``, then write the results and print the tables, also after Ctrl-C."""
    interrupted = False
    try:
        body()
    except KeyboardInterrupt:
        interrupted = True
    run.finished = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    write_json(run, json_path)
    markdown = profile_session.markdown(run)
    md_path.write_text(markdown)
    print(markdown)
    print(f"results: {relative(json_path)} and {relative(md_path)}", file=sys.stderr)
    if interrupted:
        raise KeyboardInterrupt


def _profile_diff(args: argparse.Namespace) -> int:
    side = "client" if args.side in ("auto", "both") else args.side

    def folded(path: Path) -> Path:
        candidate = path / f"{side}.folded" if path.is_dir() else path
        if not candidate.is_file():
            raise WsbenchError(f"{candidate}: no folded stacks there (a cell directory of wsbench profile, "
                               "or a .folded file)")
        return candidate

    a, b = folded(args.diff[0]), folded(args.diff[1])
    out = args.output or b.parent / f"diff-{side}.svg"
    out.parent.mkdir(parents=True, exist_ok=True)
    diff_svg(a, b, out, f"{side}: {relative(a)} → {relative(b)} (red: more, blue: less)",
             out.parent / "inferno-diff.log")
    print(f"wsbench: wrote {relative(out)}", file=sys.stderr)
    return 0


def cmd_startup(args: argparse.Namespace, argv: list[str]) -> int:
    catalog = load_catalog(args.catalog)
    clients = catalog.select("client", args.client, None)
    servers = catalog.select("server", args.server, None)
    if args.client and not args.server:
        servers = []
    if args.server and not args.client:
        clients = []
    if args.warmup < 0 or args.runs < 2:
        raise WsbenchError("--warmup must be at least 0 and --runs at least 2")
    profile_tools.require("hyperfine")
    stamp = dt.datetime.now().strftime("%Y%m%d-%H%M%S")
    args.reports.mkdir(parents=True, exist_ok=True)
    json_path, md_path = args.reports / f"startup-{stamp}.json", args.reports / f"startup-{stamp}.md"
    run = profile_session.new_run(catalog, [], clients, servers, argv,
                                  {"min_seconds": 0.0, "verify": "on", "pinning": None})
    progress = Progress(total=0, quiet=args.quiet)
    save = lambda r: write_json(r, json_path, summaries=False)  # noqa: E731

    def body() -> None:
        profile_session.startup_all(run, catalog, clients, servers, args.warmup, args.runs,
                                    PROFILES_DIR / stamp / "startup", progress.note, save)
        run.complete = True

    _profile_report(body, run, json_path, md_path)
    s = run.startup or {}
    failed = [r for kind in ("clients", "servers") for r in (s.get(kind) or {}).values() if r.get("error")]
    return EXIT_FAILED_CELLS if failed else 0


def cmd_report(args: argparse.Namespace) -> int:
    formats = [f.strip() for spec in (args.format or ["md"]) for f in spec.split(",") if f.strip()]
    for fmt in formats:
        if fmt not in report.FORMATS:
            raise WsbenchError(f"unknown format '{fmt}' (known: {', '.join(report.FORMATS)})")
    if args.screenshot and (args.out is None or "html" not in formats):
        raise WsbenchError("--screenshot needs -o DIR and the html format")
    run = read_json(args.file)
    if args.out is None:
        if len(formats) != 1:
            raise WsbenchError("several formats need -o DIR")
        print(_rendered(lambda: report.render(run, args.file, formats[0]), args.file), end="")
        return 0
    for fmt in formats:
        text = _rendered(lambda: report.render(run, args.file, fmt), args.file)
        _write(args.out / report.FORMATS[fmt], text)
    if args.screenshot:
        from .report.screenshot import check_page

        page = check_page(args.out / report.FORMATS["html"])
        flat = [size for size in page.charts if min(size) < 1]
        if page.console_errors or page.failed_requests or flat or (run.workloads and not page.charts):
            raise WsbenchError(f"{relative(page.screenshot)}: the page shows {len(page.console_errors)} console "
                               f"errors, {len(page.failed_requests)} failed requests, {len(page.charts)} charts "
                               f"({len(flat)} without a size)")
        print(f"wsbench: {relative(page.screenshot)}: {len(page.charts)} charts, no console errors", file=sys.stderr)
    return 0


def cmd_merge(args: argparse.Namespace, argv: list[str]) -> int:
    merged = merge.merge([(f, read_json(f)) for f in args.files], argv)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_json(merged, args.out)
    markdown = render_markdown(merged)
    args.out.with_suffix(".md").write_text(markdown)
    print(markdown)
    print(f"wsbench: merged {len(args.files)} shards into {relative(args.out)}", file=sys.stderr)
    return EXIT_FAILED_CELLS if _any_failure(merged) else 0


def cmd_compare(args: argparse.Namespace) -> int:
    if args.format not in ("md", "html"):
        raise WsbenchError(f"unknown format '{args.format}' (known: md, html)")
    a, b = read_json(args.a), read_json(args.b)
    ra = _rendered(lambda: compare.readings(a), args.a)
    rb = _rendered(lambda: compare.readings(b), args.b)
    changes = compare.compare(a, ra, rb)
    sections = compare.sections(a, b, (str(args.a), str(args.b)), changes)
    text = report.render_sections("wsbench compare", f"{args.a} → {args.b}", [], sections, args.format)
    if args.out:
        _write(args.out, text)
    else:
        print(text, end="")
    return compare.exit_code(changes)


def cmd_gate(args: argparse.Namespace, argv: list[str]) -> int:
    opts = gate_session.Options(baseline=args.baseline, update=args.update, only=args.only, quick=args.quick,
                                cells=args.cell, calibrate=args.calibrate, wall_run=args.wall_run,
                                out=args.out, quiet=args.quiet)
    return gate_session.run(opts, load_catalog(args.catalog), load_workloads(args.workloads_dir), argv)


T = TypeVar("T")


def _rendered(make: Callable[[], T], path: Path) -> T:
    """What ``make`` renders from a run file, with a run file whose values do not fit
    (a field of the wrong type, a number that is not one) reported as one line."""
    try:
        return make()
    except (TypeError, ValueError, KeyError, AttributeError, ZeroDivisionError) as exc:
        raise WsbenchError(f"{path}: malformed run file ({type(exc).__name__}: {exc})") from None


def _write(path: Path, text: str) -> None:
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    except OSError as exc:
        raise WsbenchError(f"{path}: cannot write ({exc.strerror})") from None
    print(f"wsbench: wrote {relative(path)}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
