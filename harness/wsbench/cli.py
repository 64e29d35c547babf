"""Command line: ``wsbench run``, ``list``, ``verify``, ``report``, ``compare``,
``stability``, ``merge``, ``conformance``, ``profile``, ``startup``, ``footprint``, ``gate``, ``count``,
``history`` and ``docker``. This module only parses the arguments (the options several subcommands share
are declared once, below) and hands over to the subcommand's module in ``commands/``;
every subcommand's errors end here: one line and exit 2, Ctrl-C exit 130, and no process
of ours left behind."""

from __future__ import annotations

import argparse
import importlib
import signal
import sys
from pathlib import Path
from typing import Any, NoReturn, Sequence

from . import __version__, footprint_measure as footprint, procs, report
from .cluster import options as cluster_options
from .conformance.schedule import DEFAULT_JOBS
from .errors import WsbenchError
from .gate import arches as gate_arches, baseline as gate_baseline, invocation as gate_invocation, wall as gate_wall
from .gate.cells import CELLS as GATE_CELLS
from .paths import PROFILES_DIR, REPORTS_DIR, RUNTIMES_FILE, WORKLOADS_DIR
from .profile import hyperfine, profiling
from .profile.record import DEFAULT_FREQUENCY
from .certificates import DEFAULT_KEY_TYPE, KEY_TYPES
from .workloads import DEFAULT_MIN_SECONDS, AXIS_MODES

EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
EVERY_DEFAULT = {"client": "; default: every default client", "server": "; default: every default server"}
SHORT = {"workload": "-w", "server": "-s", "client": "-c"}


def _names(parser: argparse.ArgumentParser, *kinds: str, defaults: bool = False) -> None:
    """--workload/-w, --server/-s, --client/-c: names, repeatable."""
    for kind in kinds:
        parser.add_argument(f"--{kind}", SHORT[kind], action="append",
                            help=f"{kind} name (repeatable{EVERY_DEFAULT[kind] if defaults else ''})")


def _results(parser: argparse.ArgumentParser, flag: str = "--out",
             help: str = "directory for the JSON and Markdown results", quiet: bool = True) -> None:
    """Where the results go (reports/), and --quiet."""
    parser.add_argument(flag, type=Path, default=REPORTS_DIR, help=help)
    if quiet:
        parser.add_argument("--quiet", "-q", action="store_true", help="no progress lines")


def _tls(parser: argparse.ArgumentParser, default: str | None = None) -> None:
    """--tls off|on|both (every server over ws://, over wss:// as NAME/wss, or both) and --tls-key."""
    parser.add_argument("--tls", choices=AXIS_MODES, default=default,
                        help="the servers over ws://, over wss:// (their twins NAME/wss), or both interleaved "
                             "(default: " + (default or "the suite's, else off") + "; certificates: build/tls/)")
    parser.add_argument("--tls-key", choices=tuple(KEY_TYPES), default=DEFAULT_KEY_TYPE,
                        help=f"the server certificate's key (default {DEFAULT_KEY_TYPE}: ECDSA P-256; rsa: RSA-2048)")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="wsbench", description="Benchmark WebSocket runtimes against each other, honestly.")
    parser.add_argument("--version", action="version", version=f"wsbench {__version__}")
    parser.add_argument("--catalog", type=Path, default=RUNTIMES_FILE,
                        help="runtimes file (default: harness/runtimes.toml)")
    parser.add_argument("--workloads-dir", type=Path, default=WORKLOADS_DIR,
                        help="directory of workload and suite files (default: workloads/)")
    sub = parser.add_subparsers(dest="command", required=True)
    add = sub.add_parser

    run = add("run", help="measure servers x clients x workloads")
    run.add_argument("--suite", help="suite from workloads/*.toml (default: quick, unless --workload is given)")
    _names(run, "workload")
    run.add_argument("--runtime", "-r", action="append", help="keep servers and clients of this runtime (repeatable)")
    _names(run, "server", "client")
    run.add_argument("--repetitions", "-n", type=int, help="repetitions per cell (default: the suite's)")
    run.add_argument("--min-seconds", type=float, metavar="S", help="shortest measured phase: bursts repeat until "
                     f"it has passed (default: the suite's, else {DEFAULT_MIN_SECONDS:g})")
    run.add_argument("--pin", action="store_true", help="run client and server on separate cores")
    run.add_argument("--verify", choices=("on", "off", "both"), default="on",
                     help="off: clients check no echo; both: also unchecked, to show what the checks cost")
    run.add_argument("--conformance", action="append", metavar="FILE|auto|quick|off",
                     help="each program's conformance summary (what it checks of RFC 6455, marked in the ranked "
                          "tables): results files of `wsbench conformance` (repeatable), and auto (default: the "
                          "newest such files under --out of the same program versions, else the quick subset), "
                          "quick (the quick subset of UTF-8 and masking cases at verify time) or off (not checked)")
    run.add_argument("--environment-from", type=Path, metavar="FILE",
                     help="a JSON object added to the run's environment section (make bench-docker)")
    cluster_options.add_arguments(run)  # --target, --shard, --cluster and theirs
    _tls(run)
    run.add_argument("--deflate", choices=AXIS_MODES, default=None,
                     help="permessage-deflate: off (every server refuses it; the default unless the suite says "
                          "otherwise), on (every server as its twin NAME/deflate with its runtime's compression; "
                          "cells whose server or client cannot compress are n/a), or both, interleaved")
    _results(run)

    mrg = add("merge", help="merge the shards of one plan (wsbench run --shard I/N): throughputs sum")
    mrg.add_argument("files", type=Path, nargs="+", help="the shards' reports/*.json files")
    mrg.add_argument("-o", "--out", type=Path, required=True, metavar="FILE", help="the merged run file (.json)")

    add("list", help="show runtimes, servers, clients, workloads and suites")
    verify = add("verify", help="start servers and check them against the echo contract")
    _names(verify, "server")
    _tls(verify, "off")

    rep = add("report", help="render a saved run: Markdown, HTML with charts, CSV or JSON")
    rep.add_argument("file", type=Path, help="a reports/*.json file")
    rep.add_argument("--format", "-f", action="append", metavar="FORMAT",
                     help=f"{', '.join(report.FORMATS)} (default md); repeatable or comma-separated")
    rep.add_argument("-o", "--out", type=Path, metavar="DIR",
                     help="write the files into DIR (" + ", ".join(report.FORMATS.values()) + ")")
    rep.add_argument("--screenshot", action="store_true",
                     help="with -o and html: check index.html in headless Chromium, save DIR/screenshot.png")

    cmp = add("compare", help="what changed between two saved runs, cell by cell (exit code: "
                              "0 same, 1 worse, 3 better only, 4 cannot decide: a cell untestable)")
    cmp.add_argument("a", type=Path, help="the run before (reports/*.json)")
    cmp.add_argument("b", type=Path, help="the run after")
    cmp.add_argument("--format", "-f", default="md", metavar="FORMAT", help="md (default) or html")
    cmp.add_argument("-o", "--out", type=Path, metavar="FILE", help="write to FILE instead of printing")
    cmp.add_argument("--raw", action="store_true",
                     help="test the values as measured (default: the drift all cells share is divided out first)")

    stab = add("stability", help="spread per cell of saved runs, and whether runs agree")
    stab.add_argument("files", type=Path, nargs="+", help="reports/*.json files (of the same matrix, to compare)")

    conf = add("conformance", help="every client against the RFC 6455 conformance cases (raw-frame peer); with "
                                   "--servers every server against the server cases (raw-byte client)")
    _names(conf, "client", defaults=True)
    conf.add_argument("--servers", action="store_true",
                      help="the servers instead: every default server (or -s NAME, --target NAME=URL) against the "
                           "server cases, grouped as Autobahn|Testsuite's sections (docs/server-conformance.md)")
    conf.add_argument("--server", "-s", action="append",
                      help="with --servers: a catalog server (repeatable; default: every default server)")
    conf.add_argument("--target", action="append", metavar="[NAME=]ws://HOST:PORT/PATH",
                      help="with --servers: a loopback server wsbench did not start (repeatable)")
    conf.add_argument("--quick", action="store_true", help="the quick subset of the cases (every section)")
    conf.add_argument("--case", action="append", help="case id or pattern: '6-invalid-*' (repeatable; default: all; "
                                                     "`wsbench list` shows them)")
    conf.add_argument("--jobs", "-j", type=int, default=DEFAULT_JOBS,
                      help=f"client processes (with --servers: connections) at a time (default {DEFAULT_JOBS})")
    conf.add_argument("--tls", action="store_true",
                      help="the peer behind TLS, every client over wss:// (certificates: build/tls/), and the "
                           "TLS-failure cases too; with --servers: the servers' TLS twins over wss://")
    conf.add_argument("--deflate", action="store_true",
                      help="the permessage-deflate (RFC 7692) cases instead: every client that can compress (with "
                           "--servers: every server's deflate twin NAME/deflate); the others n/a "
                           "(docs/deflate-conformance.md)")
    _results(conf)

    prof = add("profile", help="perf flamegraphs, CPU profiles and where-the-time-goes tables of cells "
                               "(a profiled run: never ranked)")
    _names(prof, "workload", "client", "server")
    prof.add_argument("--side", choices=("client", "server", "both", "auto"), default="auto",
                      help="which process to profile (auto: the one that is not a reference program)")
    prof.add_argument("--matrix", action="store_true",
                      help="every client against the reference server and every server driven by the reference "
                           "client (default workloads: " + ", ".join(profiling.MATRIX_WORKLOADS) +
                           "; make profile)")
    prof.add_argument("--min-seconds", type=float, default=profiling.DEFAULT_MIN_SECONDS, metavar="S",
                      help=f"shortest measured phase (default {profiling.DEFAULT_MIN_SECONDS:g})")
    prof.add_argument("--frequency", "-F", type=int, default=DEFAULT_FREQUENCY, metavar="HZ",
                      help=f"perf samples per second (default {DEFAULT_FREQUENCY})")
    prof.add_argument("--tls", choices=("off", "on"), default="off",
                      help="on: the servers named (or the default ones) over wss:// as NAME/wss, every client "
                           "over TLS (default off; certificates: build/tls/)")
    prof.add_argument("--tls-key", choices=tuple(KEY_TYPES), default=DEFAULT_KEY_TYPE,
                      help=f"the server certificate's key with --tls on (default {DEFAULT_KEY_TYPE})")
    prof.add_argument("--overhead-runs", type=int, default=1, metavar="N",
                      help="alternate the unprofiled and perf passes N times (default 1)")
    prof.add_argument("--startup", action="store_true", help="also time start-up (as wsbench startup)")
    prof.add_argument("--diff", nargs=2, type=Path, metavar=("A", "B"),
                      help="instead: a differential flamegraph from profile A to profile B (cell directories "
                           "or .folded files of the same cell)")
    prof.add_argument("-o", "--output", type=Path, metavar="FILE", help="--diff: the SVG (default: beside B)")
    prof.add_argument("--out", type=Path, default=PROFILES_DIR, help="directory for the profiles (default profiles/)")
    _results(prof, "--reports", "directory for the results JSON and Markdown")

    up = add("startup", help="start-up time of clients (connect, echo 11 B, close, exit) and servers "
                             "(exec to readiness) with hyperfine")
    _names(up, "client", "server", defaults=True)
    up.add_argument("--warmup", type=int, default=hyperfine.DEFAULT_WARMUP, help="hyperfine --warmup")
    up.add_argument("--runs", type=int, default=hyperfine.DEFAULT_RUNS, help="hyperfine --runs")
    _results(up, "--reports", "directory for the results JSON and Markdown")

    fp = add("footprint", help="the QuickJS client's footprint on x86-64 and armhf (qemu-arm): file sizes as built "
                               "and stripped, the files it maps, its RSS at start-up, and (the suite footprint) "
                               "memory per held connection over ws:// and wss://")
    fp.add_argument("--arch", action="append", choices=list(footprint.ARCHES),
                    help="an architecture (repeatable; default: all; armhf needs make setup-arm, else it is n/a)")
    fp.add_argument("--runs", type=int, default=footprint.RUNS, help="start-up readings per architecture")
    fp.add_argument("--repetitions", "-n", type=int, help="repetitions per cell (default: the suite's)")
    _names(fp, "workload")
    fp.add_argument("--no-connections", action="store_true",
                    help="sizes and start-up memory only (not the suite's held connections)")
    _results(fp)

    gate = add("gate", help="regression gate: instruction counts (callgrind) and confirmed wall-clock "
                            "ratios against the baseline (exit 0 pass, 1 regression, 2 cannot run)")
    gate.add_argument("--baseline", type=Path, default=gate_baseline.DEFAULT_PATH,
                      help="the baseline file (default: baselines/gate.json)")
    gate.add_argument("--update", action="store_true", help="measure and write the baseline instead of gating")
    gate.add_argument("--only", choices=gate_invocation.GATES, help="run one gate only")
    gate.add_argument("--quick", action="store_true", help="the reduced message counts (make test)")
    gate.add_argument("--cell", action="append", metavar="NAME",
                      help="deterministic cells only (program/workload, a program or a workload; repeatable): "
                           + ", ".join(c.name for c in GATE_CELLS) + " (with --arch armhf: qjs-armhf/...)")
    gate.add_argument("--arch", choices=list(gate_arches.ARCHES), default=gate_arches.DEFAULT,
                      help="whose instructions are counted: x86-64 (callgrind, default) or armhf (the QuickJS "
                           "client under qemu-arm with the counting plugin; needs make setup-arm; docs/arm.md)")
    gate.add_argument("--calibrate", type=int, default=0, metavar="N",
                      help="with --update: N wall-clock runs of the unchanged code set the thresholds")
    gate.add_argument("--wall-run", type=Path, metavar="FILE",
                      help="judge (or, with --update, store) the ratios of this saved run instead of measuring")
    gate.add_argument("--base", metavar="REF",
                      help="gate against commit REF, built in build/base/<sha>/ and counted and measured beside "
                           "the head here, instead of the baseline file (docs/gate.md)")
    gate.add_argument("--head", metavar="REF",
                      help="with --base: another commit as the head, built the same way (default: the working tree)")
    gate.add_argument("--summary", type=Path, metavar="FILE", help="append the verdict as Markdown to FILE (CI)")
    gate.add_argument("--wall-workload", action="append", metavar="NAME",
                      help="the wall gate on these workloads only (repeatable; default: "
                           + ", ".join(gate_wall.WORKLOADS) + ")")
    gate.add_argument("--wall-repetitions", type=int, metavar="N",
                      help=f"repetitions of the wall gate's run (default {gate_wall.REPETITIONS})")
    _results(gate, help="directory for the reports")

    cnt = add("count", help="instruction counts per message of the QuickJS client and its ablations, per "
                             "architecture (callgrind; armhf: qemu-arm with the counting plugin), for the report")
    cnt.add_argument("--claims", action="store_true",
                     help="the cells of the claims table (each claim's workload, optimized and without the optimization)")
    cnt.add_argument("--arch", action="append", choices=list(gate_arches.ARCHES),
                     help="count on this architecture (repeatable; default x86-64)")
    cnt.add_argument("--run", type=Path, metavar="FILE",
                     help="carry this run's cells (an ablations run) into the results, beside the counts")
    _results(cnt, help="directory for the results JSON and Markdown")

    hist = add("history", help="the gate's trend over many commits (a directory of results files, e.g. the "
                               "nightly's history) as one self-contained HTML page")
    hist.add_argument("dir", type=Path, help="a directory of results files (*.json, searched recursively)")
    hist.add_argument("-o", "--out", type=Path, metavar="DIR", help="write DIR/index.html instead of printing the page")
    hist.add_argument("--screenshot", action="store_true", help="with -o: check the page in headless Chromium")
    hist.add_argument("--last-commit", action="store_true",
                      help="only print the commit of the newest file in DIR (the nightly's next base)")

    docker = add("docker", help="the servers in containers, in a private Docker engine (host network only)")
    dsub = docker.add_subparsers(dest="docker_command", required=True)
    bench = dsub.add_parser("bench", help="the suite with containerized servers (make bench-docker)")
    bench.add_argument("--build-only", action="store_true", help="build the images and stop")
    bench.add_argument("run_args", nargs=argparse.REMAINDER,
                       help="-- and the options of wsbench run (default: --suite quick)")
    engine = dsub.add_parser("engine", help="a private Docker engine for one command, or whether one can start")
    esub = engine.add_subparsers(dest="engine_command", required=True)
    esub.add_parser("run", help="engine up, CMD with DOCKER_HOST set, engine down").add_argument(
        "command_line", nargs=argparse.REMAINDER, metavar="-- CMD ...", help="the command and its arguments")
    esub.add_parser("check", help="can an engine be started here? (exit 0 or 1, one line)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    command: Any = importlib.import_module(f"{__package__}.commands.{args.command}")
    prog = getattr(command, "PROG", "wsbench")
    signal.signal(signal.SIGTERM, _raise_interrupt)
    try:
        return command.main(args, list(sys.argv if argv is None else ["wsbench", *argv]))
    except WsbenchError as exc:
        print(f"{prog}: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        done = command.interrupted(args) if hasattr(command, "interrupted") else None
        print(f"{prog}: interrupted" + (f"; {done}" if done else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        procs.kill_all()


def _raise_interrupt(signum: int, frame: object) -> NoReturn:
    raise KeyboardInterrupt


if __name__ == "__main__":
    sys.exit(main())
