"""What the report's parts ask of a cell before reading its samples: its workload's kind,
and why it has no figure (n/a, blocked, every sample failed), in the words of a table cell."""

from __future__ import annotations

from ..model import Cell, Run


def kind_of(run: Run, workload: str) -> str | None:
    """The kind of a workload of the run (None: the run does not describe it)."""
    return run.workloads.get(workload, {}).get("kind")


def not_run(cell: Cell) -> str | None:
    """Why the cell has no figure, or None when it has samples that ended well."""
    if cell.na:
        return f"n/a: {cell.na}"
    if cell.blocked:
        return f"blocked: {cell.blocked}"
    if not cell.ok_samples:
        return f"failed: {cell.errors[0]}" if cell.errors else "no sample"
    return None
