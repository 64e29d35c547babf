"""``wsbench profile``: perf flamegraphs, CPU profiles and where-the-time-goes tables of
cells (profile/), optionally with start-up times; or, with ``--diff``, a differential
flamegraph of two profiles."""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any


from ..catalog import Catalog, load_catalog
from ..errors import WsbenchError
from ..paths import relative, report_files
from ..profile import hyperfine, profiling, tools
from ..profile.flamegraph import diff_svg
from ..progress import Progress
from ..report import printed_profile
from ..model import Settings, now
from ..runner import tls_axis
from ..workloads import load_workloads
from . import EXIT_FAILED, measure_and_record


def main(args: argparse.Namespace, argv: list[str]) -> int:
    if args.diff:
        return _diff(args)
    catalog, tls = load_catalog(args.catalog), None
    if args.tls == "on":
        catalog, tls = _over_tls(catalog, args.tls_key, args.server)
    plans, clients, servers = profiling.plans(catalog, load_workloads(args.workloads_dir), args.workload, args.client,
                                            args.server, args.side, args.matrix)
    if not 0 <= args.min_seconds <= 600:
        raise WsbenchError(f"--min-seconds must be between 0 and 600, got {args.min_seconds:g}")
    if not 1 <= args.overhead_runs <= 20:
        raise WsbenchError(f"--overhead-runs must be between 1 and 20, got {args.overhead_runs}")
    if not 1 <= args.frequency <= 20000:
        raise WsbenchError(f"--frequency must be between 1 and 20000, got {args.frequency}")
    tools.require(*tools.PROFILE_TOOLS, *(("hyperfine",) if args.startup else ()))
    files = report_files(args.reports, "profile")
    out_root = args.out / files.stamp
    settings = Settings(min_seconds=args.min_seconds)
    run = profiling.new_run(catalog, plans, clients if args.startup else [], servers if args.startup else [],
                          argv, {"min_seconds": args.min_seconds, "verify": "on", "pinning": None,
                                 "frequency_hz": args.frequency, "overhead_runs": args.overhead_runs,
                                 "tls": tls})
    progress = Progress(total=0, quiet=args.quiet)
    progress.note(f"wsbench profile: {len(plans)} cells; profiles: {relative(out_root)}; results: "
                  f"{relative(files.json)}")

    def measure() -> None:
        try:
            profiling.profile_all(run, plans, out_root, settings, args.frequency, progress.note, files.json,
                                  args.overhead_runs)
            if args.startup:
                profiling.startup_all(run, catalog, clients, servers, hyperfine.DEFAULT_WARMUP,
                                      hyperfine.DEFAULT_RUNS, out_root / "startup", progress.note, files.json)
            run.complete = True
        finally:
            run.finished = now()

    measure_and_record(run, files, measure, printed_profile)
    return EXIT_FAILED if run.profiles and any(c.error for c in run.profiles.cells) else 0


def _over_tls(catalog: Catalog, key_type: str, names: list[str] | None) -> tuple[Catalog, dict[str, Any] | None]:
    """The catalog as ``--tls on`` profiles it: the servers named (else the default ones)
    replaced, under their own names, by their TLS twins NAME/wss, and every client that
    speaks TLS set up for them (the others' cells are refused, naming why)."""
    chosen = catalog.select("server", names, None)
    twins, settings, values = tls_axis("on", key_type, chosen)
    assert values is not None
    servers = {**catalog.servers, **{s.name: twin for s, twin in zip(chosen, twins)}}
    clients = {n: c.over_tls(values) if c.cannot_tls() is None else c for n, c in catalog.clients.items()}
    return replace(catalog, servers=servers, clients=clients), settings


def _diff(args: argparse.Namespace) -> int:
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
