#!/usr/bin/env python3
"""Does the default run compare? The campaign that measures it (docs/reports.md, "A default
run that compares"): unchanged code against itself, and a planted change of known cause.

    .venv/bin/python scripts/compare_campaign.py run [--runs 5] [--plants 2,5,10] [--suite quick] [--out DIR]
    .venv/bin/python scripts/compare_campaign.py analyze DIR

`run` measures, one after the other and interleaved, RUNS runs of the suite on unchanged code
and one run per plant level N with WSBENCH_PLANT_SPIN=N (clients/quickjs.mjs: every message
handler of the QuickJS client runs N empty loop turns first — a per-message slowdown of the
`quickjs` and `quickjs-baseline` cells that touches neither the module nor any other
client), each an ordinary `wsbench run --suite SUITE` (a plant run records its level in
its environment, `planted`); then `analyze`. The runs go into DIR (default
reports/campaign-<time>/); every other process on the machine skews them: run it alone.

`analyze` reads DIR's runs and writes DIR/summary.md (also printed):

- every pair of unchanged runs compared as `wsbench compare` does (drift removed): how many
  cells each pair decides (worse or better: each one a false positive), untestable and
  unchanged; the same pairs tested as measured (`--raw`) beside it;
- every plant run against every unchanged run: per planted cell its size (the median over
  those pairs of the change with the drift removed) and how often it was found (worse);
  found-rates by size, the smallest size found in at least 80 % of the pairs; and the
  other cells called changed (false positives under a real change elsewhere).

Exit status: 0 when the campaign ran (whatever it found), 2 on a usage or input problem.
"""

from __future__ import annotations

import argparse
import datetime as dt
import itertools
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "harness"))

from wsbench import compare  # noqa: E402
from wsbench.errors import WsbenchError  # noqa: E402
from wsbench.model import Run, read_json  # noqa: E402

PLANTED_CLIENTS = ("quickjs", "quickjs-baseline")  # the clients clients/quickjs.mjs runs
FOUND = 0.8  # "found": in at least this share of the pairs
SIZES = (0.0, 0.05, 0.10, 0.15, 0.20, 0.30, 0.50, float("inf"))


def main() -> int:
    parser = argparse.ArgumentParser(prog="compare_campaign.py", description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="measure the runs, then analyze them")
    run.add_argument("--runs", type=int, default=5, help="runs of unchanged code (default 5: 10 pairs)")
    run.add_argument("--plants", default="2,5,10", help="WSBENCH_PLANT_SPIN levels, one run each (default 2,5,10)")
    run.add_argument("--suite", default="quick", help="the suite (default quick: make bench)")
    run.add_argument("--out", type=Path, help="directory (default reports/campaign-<time>/)")
    ana = sub.add_parser("analyze", help="analyze the runs in DIR")
    ana.add_argument("dir", type=Path)
    args = parser.parse_args()
    try:
        if args.command == "run":
            plants = [int(p) for p in args.plants.split(",") if p.strip()]
            if args.runs < 2 or any(p < 1 for p in plants):
                raise WsbenchError("--runs must be at least 2 and every plant level at least 1")
            out = args.out or ROOT / "reports" / f"campaign-{dt.datetime.now():%Y%m%d-%H%M%S}"
            measure(out, args.runs, plants, args.suite)
            directory = out
        else:
            directory = args.dir
        text = analyze(directory)
    except WsbenchError as exc:
        print(f"compare_campaign: error: {exc}", file=sys.stderr)
        return 2
    (directory / "summary.md").write_text(text)
    print(text)
    print(f"compare_campaign: wrote {directory / 'summary.md'}", file=sys.stderr)
    return 0


def measure(out: Path, runs: int, plants: list[int], suite: str) -> None:
    """The runs, unchanged and planted interleaved (so slow drift of the machine over the
    campaign does not line up with the plant)."""
    order: list[int | None] = []  # None: unchanged
    for i in range(max(runs, len(plants))):
        if i < runs:
            order.append(None)
        if i < len(plants):
            order.append(plants[i])
    for i, level in enumerate(order, 1):
        where = out / (f"{i:02d}-unchanged" if level is None else f"{i:02d}-plant-{level}")
        where.mkdir(parents=True, exist_ok=True)
        env = {**os.environ}
        argv = [str(ROOT / ".venv" / "bin" / "wsbench"), "run", "--suite", suite, "-q", "--out", str(where)]
        if level is not None:
            env["WSBENCH_PLANT_SPIN"] = str(level)
            extra = where / "planted.json"
            extra.write_text(json.dumps({"planted": {"WSBENCH_PLANT_SPIN": level, "clients": list(PLANTED_CLIENTS)}}))
            argv += ["--environment-from", str(extra)]
        else:
            env.pop("WSBENCH_PLANT_SPIN", None)
        print(f"compare_campaign: [{i}/{len(order)}] {where.name}", file=sys.stderr)
        done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL)
        if done.returncode not in (0, 1):  # 1: a cell failed, the rest was measured
            raise WsbenchError(f"wsbench run exited {done.returncode} ({where})")


def load(directory: Path) -> tuple[list[tuple[str, Run]], list[tuple[str, int, Run]]]:
    unchanged, planted = [], []
    for path in sorted(directory.glob("*/run-*.json")):
        run = read_json(path)
        level = (run.environment.get("planted") or {}).get("WSBENCH_PLANT_SPIN")
        name = path.parent.name
        if level is None:
            unchanged.append((name, run))
        else:
            planted.append((name, int(level), run))
    if len(unchanged) < 2:
        raise WsbenchError(f"{directory}: fewer than 2 runs of unchanged code (*/run-*.json without 'planted')")
    return unchanged, planted


def analyze(directory: Path) -> str:
    unchanged, planted = load(directory)
    readings = {id(r): compare.readings(r) for _, r in unchanged} | {id(r): compare.readings(r) for _, _, r in planted}
    out = [f"# Does the default run compare? ({directory.name})", "",
           f"{len(unchanged)} runs of unchanged code ({len(unchanged) * (len(unchanged) - 1) // 2} pairs), "
           f"{len(planted)} planted runs; suite {unchanged[0][1].suite}, {unchanged[0][1].repetitions} repetitions, "
           f"floor {unchanged[0][1].settings.get('min_seconds')} s; {unchanged[0][1].environment.get('cpu_model')} "
           f"× {unchanged[0][1].environment.get('logical_cpus')}.", "",
           "## Unchanged code against itself", "",
           "| pair | cells | decided (drift removed) | untestable | shared shift B/A | decided (--raw) |",
           "|---|---:|---:|---:|---:|---:|"]
    total = decided = raw_decided = pairs_with_any = 0
    for (na, a), (nb, b) in itertools.combinations(unchanged, 2):
        changes, drift = compare.judged(a, readings[id(a)], readings[id(b)])
        raw = compare.compare(a, readings[id(a)], readings[id(b)], raw=True)
        n = sum(c.verdict in ("worse", "better") for c in changes)
        nr = sum(c.verdict in ("worse", "better") for c in raw)
        shift = ", ".join(f"{v - 1:+.1%}" for v in (drift.shift.values() if drift else [])) or "–"
        out.append(f"| {na} → {nb} | {len(changes)} | {n} | {sum(c.verdict == 'untestable' for c in changes)} | "
                   f"{shift} | {nr} |")
        total, decided, raw_decided = total + len(changes), decided + n, raw_decided + nr
        pairs_with_any += n > 0
    pairs = len(unchanged) * (len(unchanged) - 1) // 2
    out += ["", f"**False-positive rate: {decided} of {total} cell comparisons ({decided / total:.2%}) called changed "
                f"with the drift removed; {pairs_with_any} of {pairs} pairs called anything changed.** Tested as "
                f"measured (--raw): {raw_decided} ({raw_decided / total:.2%}).", ""]
    if planted:
        out += plant_section(unchanged, planted, readings)
    return "\n".join(out) + "\n"


def plant_section(unchanged: list[tuple[str, Run]], planted: list[tuple[str, int, Run]],
                  readings: dict[int, compare.Readings]) -> list[str]:
    out = ["## A planted change (WSBENCH_PLANT_SPIN: a per-message loop in the QuickJS client)", "",
           "Each plant run against each unchanged run. A planted cell's size is the median over those pairs of "
           "its change with the drift removed (msgs/s, B over A).", "",
           "| level | cell | size | found (worse) |", "|---:|---|---:|---:|"]
    by_size: list[tuple[float, float]] = []  # (size, share of pairs found)
    others = other_cells = 0
    for name, level, p in planted:
        per_cell: dict[str, list[compare.Change]] = {}
        for _, u in unchanged:
            for c in compare.compare(u, readings[id(u)], readings[id(p)]):
                if c.client in PLANTED_CLIENTS:
                    per_cell.setdefault(f"{c.workload}/{c.server}/{c.client}", []).append(c)
                else:
                    other_cells += 1
                    others += c.verdict in ("worse", "better")
        for cell, cs in sorted(per_cell.items()):
            size = -statistics.median(c.change for c in cs)
            found = sum(c.verdict == "worse" for c in cs) / len(cs)
            by_size.append((size, found))
            what = f"{size:.1%} slower" if size >= 0 else f"{-size:.1%} faster"
            out.append(f"| {level} | {cell} | {what} | {found:.0%} of {len(cs)} |")
    out += ["", "| planted size (slower) | cells | found in ≥ 80 % of pairs | mean share of pairs found |",
            "|---|---:|---:|---:|"]
    smallest = None
    for lo, hi in zip(SIZES, SIZES[1:]):
        group = [f for s, f in by_size if lo <= s < hi]
        if group:
            out.append(f"| {lo:.0%} – {hi:.0%} | {len(group)} | {sum(f >= FOUND for f in group)} | "
                       f"{statistics.fmean(group):.0%} |")
    found_sizes = sorted(s for s, f in by_size if f >= FOUND)
    if found_sizes:
        smallest = found_sizes[0]
        reliable = [lo for lo in SIZES[:-1] if all(f >= FOUND for s, f in by_size if s >= lo) and any(
            s >= lo for s, _ in by_size)]
        out += ["", f"**Smallest planted change found in at least {FOUND:.0%} of the pairs: {smallest:.1%} slower; "
                    f"every planted cell of {reliable[0]:.0%} or more was found that often.**" if reliable else
                    f"**Smallest planted change found in at least {FOUND:.0%} of the pairs: {smallest:.1%} slower.**"]
    else:
        out += ["", f"**No planted cell was found in {FOUND:.0%} of the pairs.**"]
    out += ["", f"Cells not planted called changed in these pairs: {others} of {other_cells} "
                f"({others / other_cells:.2%})." if other_cells else ""]
    return out


if __name__ == "__main__":
    sys.exit(main())
