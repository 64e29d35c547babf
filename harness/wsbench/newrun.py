"""Making a ``Run`` (model/): one factory for every command that records one.

- ``new_run``: a run about to be measured (``wsbench run``, ``conformance``, ``profile``,
  ``startup``): the machine and the runtimes' versions are collected now, the programs
  recorded as they are in the catalog; what differs between the commands (workloads,
  cells, settings, a side section) is passed in.
- ``carrying``: a run made of another run's measurement, or of none (the gate's report
  and its baseline): complete as it is made.

Layering: above the model and environment, below the runner, the commands and the CLI.
"""

from __future__ import annotations

from typing import Any, Callable, Iterable

from . import environment
from .catalog import Catalog, Program
from .model import Cell, ProgramRecord, Run, now
from .workloads import Workload


def record(program: Program) -> ProgramRecord:
    """A server or client of the catalog as the run records it."""
    return ProgramRecord(program.name, program.label, program.runtime, list(program.command),
                         echo_checks=program.echo_checks, expect=dict(program.expect) or None,
                         barrier=program.barrier if program.kind == "client" else None)


def new_run(catalog: Catalog, argv: list[str], servers: Iterable[Program], clients: Iterable[Program],
            settings: dict[str, Any], *, workloads: Iterable[Workload] = (), cells: list[Cell] | None = None,
            suite: str | None = None, repetitions: int = 1, environment_extra: dict[str, Any] | None = None,
            server_record: Callable[[Program], ProgramRecord] = record, **sections: Any) -> Run:
    """A new run of ``servers`` x ``clients``; ``sections``: a side section to start with
    (``conformance=...``)."""
    servers, clients = list(servers), list(clients)
    runtimes = sorted({p.runtime for p in [*servers, *clients]})
    env = environment.collect(catalog.runtimes[r] for r in runtimes)
    env.update(environment_extra or {})
    return Run(created=now(), command=argv, suite=suite, repetitions=repetitions, environment=env,
               workloads={w.name: w.to_json() for w in workloads},
               servers={s.name: server_record(s) for s in servers}, clients={c.name: record(c) for c in clients},
               cells=cells or [], settings=settings, **sections)


def carrying(source: Run | None, argv: list[str], env: dict[str, Any], settings: dict[str, Any],
             **sections: Any) -> Run:
    """A complete run holding ``source``'s measurement (its workloads, programs and cells;
    none without a source) under a new command, environment and settings."""
    return Run(created=now(), command=argv, suite=None, repetitions=source.repetitions if source else 0,
               environment=env, workloads=source.workloads if source else {},
               servers=source.servers if source else {}, clients=source.clients if source else {},
               cells=source.cells if source else [], finished=now(), complete=True, settings=settings, **sections)
