"""The deflate axis in a report (runs of ``wsbench run --deflate on|both``): the facts line,
and the mark each ranked row carries after its server, so that rows with and without
permessage-deflate are never read as like with like.

A row's mark comes from what its samples recorded (deflate.negotiated): the server's
WSBENCH-DEFLATE lines where it tells, else the client's WebSocket ``extensions``."""

from __future__ import annotations

from ..deflate import negotiated
from ..model import Cell, Run

MARKS = {True: "deflate", False: "no deflate", None: "deflate ?"}


def header(run: Run) -> list[str]:
    """The report's facts line about the deflate axis, or nothing in a run without it."""
    axis = run.settings.get("deflate")
    if not axis:
        return []
    both = "servers with and without it, interleaved" if axis.get("mode") == "both" else "every server with it"
    return [f"permessage-deflate: {both} (NAME/deflate: the runtime's own compression); each row's server is marked "
            "[deflate] when its connections compressed, [no deflate] when not, [deflate ?] when neither side could "
            "tell: only rows with the same mark compare like with like"]


def mark(run: Run, cell: Cell) -> str:
    """`` [deflate]``, `` [no deflate]`` or `` [deflate ?]`` after a row's server in a run
    with the axis; empty otherwise."""
    if not run.settings.get("deflate"):
        return ""
    record = run.servers.get(cell.server)
    if record is None or record.deflate is None:
        return f" [{MARKS[False]}]"  # deflate off: the server refuses every offer (contract item 5)
    told = {negotiated(s.extra.get("server_deflate"), s.extra.get("extensions")) for s in cell.ok_samples}
    return f" [{MARKS[told.pop() if len(told) == 1 else None]}]"
