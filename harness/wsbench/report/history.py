"""The history of the gate (``wsbench history DIR``): one self-contained HTML page over the
results files of many runs, one point per commit — built like the report (sections,
matplotlib SVG inlined through the report's template, no script, nothing from the
network).

Every ``*.json`` results file under DIR counts: gate reports (``wsbench gate``, above all
the nightly's ``--base`` reports that the history branch keeps) and plain runs. A point
belongs to the commit the file measured — the head of a ``--base`` gate
(``environment.gate_builds.head.commit``), else the run's ``git_commit`` — and the points
are ordered by when a commit was first measured. Where one commit has several files, the
newest file that has a kind of figure gives it.

What the page shows, per commit:

- the verdict of the gate (exit code, and the cells it named);
- per deterministic cell, the head's instructions per message (exact counts: no
  interval), with the band the gate allowed it (the base's count −3 % … +3 %: ``settings.gate``
  of the report, else the defaults of gate/deterministic.py) and a cross where it fired;
- per wall-clock cell of our clients and the reference, the median of the ranking metric
  with its 95 % bootstrap interval over the repetitions;
- per gated ratio (our client over the reference, per round), the median with its
  interval, the band (the base's median ratio ± the minimum effect) and the crosses.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..doc import Chart, Grid, Report, Section
from ..errors import WsbenchError
from ..gate import deterministic, wall
from ..gate.cells import UNGATED
from ..metrics import METRICS
from ..model import FAILING, GateReport, Run, read_json
from ..stats import bootstrap_median_ci

Interval = tuple[float, float, float]  # median, low, high


@dataclass
class Point:
    """What is known of one commit."""

    commit: str
    dirty: bool
    first_seen: str  # the earliest file's time
    files: list[str] = field(default_factory=list)
    gates: dict[str, tuple[int, list[str]]] = field(default_factory=dict)  # per gate, the newest: exit code, named
    counts: dict[str, tuple[float | None, tuple[float, float] | None]] = field(default_factory=dict)
    rates: dict[str, Interval] = field(default_factory=dict)  # "workload/client" -> msgs/s (ranking metric)
    ratios: dict[str, tuple[Interval | None, tuple[float, float] | None]] = field(default_factory=dict)
    metrics: dict[str, str] = field(default_factory=dict)  # workload -> its ranking metric
    machine: str = ""
    base: str | None = None  # the base commit of a --base gate

    @property
    def label(self) -> str:
        return self.commit[:7] + ("*" if self.dirty else "")

    @property
    def fired(self) -> list[str]:
        """"gate cell" of every figure a gate named (regressed or failed)."""
        return [n for _, named in self.gates.values() for n in named]

    @property
    def exit_code(self) -> int | None:
        codes = {code for code, _ in self.gates.values()}
        return None if not codes else 1 if 1 in codes else 2 if 2 in codes else 0


def load(directory: Path) -> list[Point]:
    """The points of every results file under ``directory``, oldest commit first."""
    if not directory.is_dir():
        raise WsbenchError(f"{directory}: not a directory")
    files = sorted(p for p in directory.rglob("*.json") if p.is_file())
    if not files:
        raise WsbenchError(f"{directory}: no results file (*.json) in it")
    runs = sorted(((read_json(p), p) for p in files), key=lambda rp: rp[0].created)
    points: dict[str, Point] = {}
    for run, path in runs:
        commit, dirty = _commit(run)
        point = points.setdefault(commit, Point(commit, dirty, run.created))
        point.files.append(str(path.relative_to(directory)))
        point.machine = str(run.environment.get("cpu_model") or point.machine)
        _take(point, run)  # newer files (later in the loop) replace what older ones gave
    return sorted(points.values(), key=lambda p: p.first_seen)


def last_commit(directory: Path) -> str | None:
    """The commit of the newest file under ``directory`` (the nightly's next base)."""
    files = sorted(p for p in directory.rglob("*.json") if p.is_file()) if directory.is_dir() else []
    if not files:
        return None
    newest = max((read_json(p) for p in files), key=lambda r: r.created)
    return _commit(newest)[0]


def _commit(run: Run) -> tuple[str, bool]:
    head = (run.environment.get("gate_builds") or {}).get("head") or {}
    if head.get("commit") and head.get("tree") not in (None, "."):
        return str(head["commit"]), False  # --head REF: a commit built from git, never dirty
    commit = head.get("commit") or run.environment.get("git_commit") or "unknown"
    return str(commit), bool(run.environment.get("git_dirty"))


def _take(point: Point, run: Run) -> None:
    settings = run.settings.get("gate") or {}
    rise = float(settings.get("rise", deterministic.RISE))
    fall = float(settings.get("fall", deterministic.FALL))
    effects = settings.get("min_effect") or dict(wall.DEFAULT_EFFECT)
    spec = wall.Spec.from_json(settings["wall_spec"]) if settings.get("wall_spec") else wall.Spec()
    builds = run.environment.get("gate_builds") or {}
    gate = run.gate if isinstance(run.gate, GateReport) else None
    if gate is not None:
        for o in gate.outcomes:
            point.gates[o.gate] = (o.exit_code, [f"{f.gate} {f.cell}" for f in o.findings if f.verdict in FAILING])
        point.base = (builds.get("base") or {}).get("commit") or point.base
        counts = {f.cell: f for o in gate.outcomes for f in o.findings if o.gate == "deterministic"}
        if counts:
            point.counts = {cell: (None if f.verdict == "failed" else f.value,
                                   (f.baseline * (1 - fall), f.baseline * (1 + rise))
                                   if f.baseline and cell not in UNGATED else None)
                            for cell, f in counts.items()}
    names = _names(builds, spec)
    rates: dict[str, Interval] = {}
    for cell in run.cells:
        if cell.server != names.get(spec.server, spec.server) or "@base" in cell.client:
            continue
        metric = str(run.workloads.get(cell.workload, {}).get("metric", "msgs_per_s"))
        summary = cell.summary(metric)
        if summary is not None:
            client = cell.client.split("@")[0]
            rates[f"{cell.workload}/{client}"] = (summary.median, *summary.ci95)
            point.metrics[cell.workload] = metric
    if rates:
        point.rates = rates
        head = wall.ratios(run, spec, names)
        findings = {f"{f.cell}/{f.metric.split(' ')[0]}": f for o in (gate.outcomes if gate else [])
                    for f in o.findings if o.gate == "wall"}
        ratios: dict[str, tuple[Interval | None, tuple[float, float] | None]] = {}
        for key in sorted(set(head) | set(findings)):
            values = head.get(key)
            interval = (statistics.median(values), *bootstrap_median_ci(values)) if values else None
            f = findings.get(key)
            effect = float(effects.get("latency_p99_us" if key.endswith("latency_p99_us") else "throughput",
                                       wall.DEFAULT_EFFECT["throughput"]))
            ratios[key] = (interval, (f.baseline * (1 - effect), f.baseline * (1 + effect)) if f and f.baseline else None)
        point.ratios = ratios


def _names(builds: dict[str, Any], spec: wall.Spec) -> dict[str, str]:
    """The run's names of the head's clients and server (``quickjs@head`` with --head REF)."""
    head = builds.get("head") or {}
    if head.get("tree") in (None, "."):
        return {}
    return {**{c: f"{c}@head" for c in spec.clients}, spec.server: f"{spec.server}@head"}


def build(points: list[Point], source: str, with_charts: bool = True) -> Report:
    from . import charts

    labels = [p.label for p in points]
    facts = [f"{len(points)} commits, {sum(len(p.files) for p in points)} results files, from "
             f"{points[0].first_seen} to {points[-1].first_seen}",
             "machines: " + ", ".join(sorted({p.machine for p in points if p.machine}) or ["unknown"]),
             "a point per commit; blue: the median (deterministic cells: the exact count) with its 95 % interval; "
             "green: the band the gate allowed (the base's figure ± the threshold); red cross: the gate fired"]
    gates = sorted({g for p in points for g in p.gates}, key=lambda g: ("build", "deterministic", "wall").index(g)
                   if g in ("build", "deterministic", "wall") else 9)
    table = Grid(["#", "commit", "first measured", "base", "gate", *gates, "named", "files"], right={0})
    for i, p in enumerate(points):
        table.add([str(i), f"`{p.commit[:12]}`" + (" (dirty)" if p.dirty else ""), p.first_seen,
                   f"`{p.base[:12]}`" if p.base else "–", _verdict(p.exit_code),
                   *[_verdict(p.gates[g][0]) if g in p.gates else "–" for g in gates],
                   ", ".join(p.fired) or "–", ", ".join(p.files)])
    sections = [Section("Commits", [table])]
    cells = _ordered({c for p in points for c in p.counts})
    if cells:
        blocks: list[Any] = ["Instructions per message of each deterministic cell (callgrind, the head's build of "
                             "each commit); the green band runs from 3 % under to 3 % over the base's count of the "
                             "same job (a rise beyond it fails the gate; "
                             + ", ".join(UNGATED) + " is counted, never gated: no band)."]
        for program in _programs(cells):
            panels = [charts.Panel(c, "instructions/message", [_count(p, c) for p in points], [None] * len(points),
                                   [None] * len(points), [p.counts.get(c, (None, None))[1] for p in points],
                                   [f"deterministic {c}" in p.fired for p in points])
                      for c in cells if c.split("/")[0] == program]
            if with_charts:
                blocks.append(Chart(charts.trend(panels, labels), f"{program}: instructions per message per commit"))
        grid = Grid(["cell", *labels], right=set(range(1, len(points) + 1)))
        for c in cells:
            grid.add([c, *[_fmt(_count(p, c)) for p in points]])
        blocks.append(grid)
        sections.append(Section("Instruction counts", blocks))
    keys = sorted({k for p in points for k in p.rates})
    if keys:
        blocks = ["The wall-clock run of each gate (our clients and the reference against the native server, "
                  "interleaved): the median of the ranking metric over the repetitions with its 95 % bootstrap "
                  "interval; and the ratios the wall gate judges (our client over the reference, per round), with "
                  "the band the gate allowed (the base's median ratio ± the minimum effect)."]
        for workload in _ordered({k.split("/")[0] for k in keys}):
            metric = next((p.metrics[workload] for p in points if workload in p.metrics), "msgs_per_s")
            header = METRICS[metric].header if metric in METRICS else metric
            clients = [*wall.CLIENTS, wall.REFERENCE]
            mine = sorted((k for k in keys if k.split("/")[0] == workload),
                          key=lambda k: (clients.index(k.split("/")[1]) if k.split("/")[1] in clients else 9, k))
            panels = [charts.Panel(k.split("/", 1)[1], header, *_series(points, k), [None] * len(points),
                                   [False] * len(points)) for k in mine]
            ratio_keys = sorted({k for p in points for k in p.ratios if k.split("/")[0] == workload})
            panels += [charts.Panel(f"{k.split('/')[1]} / {wall.REFERENCE} ({k.split('/')[2]})", "ratio",
                                    *_ratio_series(points, k), [p.ratios.get(k, (None, None))[1] for p in points],
                                    [f"wall {'/'.join(k.split('/')[:2])}" in p.fired for p in points])
                       for k in ratio_keys]
            if with_charts:
                blocks.append(Chart(charts.trend(panels, labels), f"{workload}: {header} per client and the gated "
                                                                  "ratios, per commit"))
        sections.append(Section("Wall clock", blocks))
    return Report("wsbench history", source, facts, sections)


def _verdict(code: int | None) -> str:
    return {0: "pass", 1: "**REGRESSION**", 2: "could not run"}.get(code, "–") if code is not None else "–"


def _ordered(names: set[str]) -> list[str]:
    """Cells in the gate's order (programs, then workloads as the cell table lists them)."""
    from ..gate.cells import CELLS

    order = {c.name: i for i, c in enumerate(CELLS)}
    order.update({w: i for i, w in enumerate(wall.WORKLOADS)})
    return sorted(names, key=lambda n: (order.get(n, len(order)), n))


def _programs(cells: list[str]) -> list[str]:
    return list(dict.fromkeys(c.split("/")[0] for c in cells))


def _count(p: Point, cell: str) -> float | None:
    return p.counts.get(cell, (None, None))[0]


def _fmt(v: float | None) -> str:
    return "–" if v is None else f"{v:,.1f}"


def _series(points: list[Point], key: str) -> tuple[list[float | None], list[float | None], list[float | None]]:
    got = [p.rates.get(key) for p in points]
    return [g[0] if g else None for g in got], [g[1] if g else None for g in got], [g[2] if g else None for g in got]


def _ratio_series(points: list[Point], key: str) -> tuple[list[float | None], list[float | None], list[float | None]]:
    got = [p.ratios.get(key, (None, None))[0] for p in points]
    return [g[0] if g else None for g in got], [g[1] if g else None for g in got], [g[2] if g else None for g in got]
