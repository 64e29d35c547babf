"""Workloads and suites, declared in ``workloads/*.toml``.

A file may hold any number of ``[workload.NAME]`` and ``[suite.NAME]`` tables; names are
unique across all files.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from . import tomlfile
from .errors import WsbenchError
from .paths import WORKLOADS_DIR

MODES = ("burst", "window", "pingpong")
TYPES = ("text", "binary")


@dataclass(frozen=True)
class Workload:
    name: str
    description: str
    type: str
    size: int
    count: int
    warmup: int
    mode: str
    window: int
    timeout_s: float
    source: str

    def client_args(self) -> list[str]:
        return ["--type", self.type, "--size", str(self.size), "--count", str(self.count),
                "--warmup", str(self.warmup), "--mode", self.mode, "--window", str(self.window),
                "--timeout-ms", str(int(self.timeout_s * 1000))]

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Suite:
    name: str
    description: str
    workloads: tuple[str, ...]
    repetitions: int
    source: str


@dataclass(frozen=True)
class WorkloadSet:
    workloads: dict[str, Workload]
    suites: dict[str, Suite]

    def select(self, suite: str | None, names: list[str] | None) -> tuple[Suite | None, list[Workload]]:
        for name in names or []:
            if name not in self.workloads:
                raise WsbenchError(f"unknown workload '{name}' (known: {', '.join(self.workloads)})")
        chosen_suite = None
        if suite is not None:
            if suite not in self.suites:
                raise WsbenchError(f"unknown suite '{suite}' (known: {', '.join(self.suites)})")
            chosen_suite = self.suites[suite]
            pool = list(chosen_suite.workloads)
        else:
            pool = list(names or self.workloads)
        chosen = [self.workloads[n] for n in pool if not names or n in names]
        if not chosen:
            raise WsbenchError(f"no workload left after filtering suite '{suite}' by {', '.join(names or [])}")
        return chosen_suite, chosen


def load_workloads(directory: Path = WORKLOADS_DIR) -> WorkloadSet:
    workloads: dict[str, Workload] = {}
    suites: dict[str, Suite] = {}
    files = sorted(directory.glob("*.toml"))
    if not files:
        raise WsbenchError(f"{tomlfile.display(directory)}: no workload files (*.toml)")
    for path in files:
        data = tomlfile.load(path)
        where = tomlfile.display(path)
        tomlfile.check_keys(where, data, set(), {"workload", "suite"})
        for name, table in data.get("workload", {}).items():
            if name in workloads:
                raise WsbenchError(f"{where}: workload '{name}' is also defined in {workloads[name].source}")
            workloads[name] = _workload(f"{where}: workload '{name}'", name, table, where)
        for name, table in data.get("suite", {}).items():
            if name in suites:
                raise WsbenchError(f"{where}: suite '{name}' is also defined in {suites[name].source}")
            suites[name] = _suite(f"{where}: suite '{name}'", name, table, where)
    for suite in suites.values():
        for name in suite.workloads:
            if name not in workloads:
                raise WsbenchError(f"{suite.source}: suite '{suite.name}' names unknown workload '{name}'")
    return WorkloadSet(workloads, suites)


def _workload(where: str, name: str, table: Any, source: str) -> Workload:
    tomlfile.expect(where, table, dict, "the entry")
    tomlfile.check_keys(where, table, {"description", "type", "size", "count"},
                        {"warmup", "mode", "window", "timeout_s"})
    kind = tomlfile.expect(where, table["type"], str, "type")
    if kind not in TYPES:
        raise WsbenchError(f"{where}: type must be one of {', '.join(TYPES)}, got '{kind}'")
    mode = tomlfile.expect(where, table.get("mode", "burst"), str, "mode")
    if mode not in MODES:
        raise WsbenchError(f"{where}: mode must be one of {', '.join(MODES)}, got '{mode}'")
    size = _non_negative(where, table["size"], "size")
    count = _positive(where, table["count"], "count")
    warmup = _non_negative(where, table.get("warmup", min(count, 1000)), "warmup")
    window = _positive(where, table.get("window", 1 if mode == "pingpong" else count), "window")
    timeout = tomlfile.expect(where, table.get("timeout_s", 60), (int, float), "timeout_s")
    if timeout <= 0:
        raise WsbenchError(f"{where}: timeout_s must be positive")
    return Workload(name, tomlfile.expect(where, table["description"], str, "description"),
                    kind, size, count, warmup, mode, window, float(timeout), source)


def _suite(where: str, name: str, table: Any, source: str) -> Suite:
    tomlfile.expect(where, table, dict, "the entry")
    tomlfile.check_keys(where, table, {"description", "workloads"}, {"repetitions"})
    names = tomlfile.expect(where, table["workloads"], list, "workloads")
    for item in names:
        tomlfile.expect(where, item, str, "every workload name")
    reps = _positive(where, table.get("repetitions", 3), "repetitions")
    return Suite(name, tomlfile.expect(where, table["description"], str, "description"),
                 tuple(names), reps, source)


def _positive(where: str, value: Any, what: str) -> int:
    tomlfile.expect(where, value, int, what)
    if value <= 0:
        raise WsbenchError(f"{where}: {what} must be positive, got {value}")
    return value


def _non_negative(where: str, value: Any, what: str) -> int:
    tomlfile.expect(where, value, int, what)
    if value < 0:
        raise WsbenchError(f"{where}: {what} must not be negative, got {value}")
    return value
