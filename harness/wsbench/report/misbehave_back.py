"""Client-side backpressure in "When peers misbehave" (issue 34, part 2; docs/misbehave.md,
"A server that stops reading"): per cell of a ``backpressure`` workload (every client
against lws-echo reading nothing for a while), ``bufferedAmount`` at the mark beside the
bytes really unwritten then and the kernel's queues, the verdict, whether ``send()``
accepted everything, the client's RSS growth and how long it took to recover. The figures
are judged from each sample's marks and result (harness/wsbench/backpressure.py, as the
harness stored them in ``extra.backpressure``, judged again here so that every run is read
by the same rules); a cell shows its first repetition, with every repetition's verdict."""

from __future__ import annotations

from typing import Any

from .. import backpressure
from ..doc import Block, Bullets, Details, Grid
from ..model import Cell, Run
from ..ranking import label
from .cell_state import kind_of, not_run

HEAD = "**A server that stops reading: does bufferedAmount tell the truth?**"
TONE = {"truthful": "ok", "under-reports": "failed", "over-reports": "non-strict"}


def _mib(value: Any) -> str:
    return f"{value / 2**20:,.2f}" if isinstance(value, (int, float)) else "–"


def _ms(value: Any) -> str:
    return f"{value:,.0f}" if isinstance(value, (int, float)) else "–"


def _verdict(judged: list[dict[str, Any]]) -> str:
    verdicts = sorted({str(j.get("verdict")) for j in judged})
    if verdicts == ["None"]:
        return f"no verdict: {judged[0].get('why')}"
    return verdicts[0] if len(verdicts) == 1 else "differs between repetitions: " + ", ".join(verdicts)


def _counts(j: dict[str, Any]) -> str:
    framing = j.get("counts_framing")
    return "payload and frame headers" if framing is True else "payload" if framing is False else "–"


def _recovered(j: dict[str, Any]) -> str:
    if not j.get("recovered"):
        return "no: not every echo back, or bufferedAmount not 0, by the timeout"
    return f"yes, {_ms(j.get('recover_ms'))} ms"


def _bounded(j: dict[str, Any]) -> str:
    if j.get("bounded"):
        return "bounded: " + str(j.get("send"))
    return f"unbounded: took all {_mib(j.get('sent_bytes'))} MiB"


def blocks(run: Run) -> list[Block]:
    grid = Grid(["workload", "client", "bufferedAmount MiB", "unwritten MiB", "kernel: client send queue + "
                 "server receive queue MiB", "verdict", "counts", "send()", "client RSS growth MiB", "recovered"],
                right={2, 3, 4, 8})
    evidence: list[str] = []
    for cell in run.cells:
        if kind_of(run, cell.workload) != "backpressure":
            continue
        who = label(run, "clients", cell.client)
        why = not_run(cell)
        if why is not None:
            grid.add([cell.workload, who, "–", "–", "–", why], tones={5: "none"})
            continue
        judged = [backpressure.judge(s.extra) for s in cell.ok_samples]
        j = judged[0]
        verdict = _verdict(judged)
        rss = j.get("rss_growth_kib")
        grid.add([cell.workload, who, _mib(j.get("buffered_at_mark")), _mib(j.get("unwritten_bytes")),
                  f"{_mib(j.get('client_sendq'))} + {_mib(j.get('server_recvq'))}", verdict, _counts(j),
                  _bounded(j), _mib(rss * 1024) if isinstance(rss, int) else "–", _recovered(j)],
                 tones={5: TONE.get(verdict, "info")})
        if j.get("verdict") is not None:
            evidence.append(f"{cell.workload}, {who}: {j.get('why')}; the server read "
                            f"{j.get('server_read_bytes', 0):,} B before the mark"
                            + ("" if j.get("queues_still") else "; the kernel still took bytes 100 ms after it"))
    if not grid.rows:
        return []
    intro = (f"{HEAD} Each client sends as fast as `send()` takes it against lws-echo reading nothing after the "
             "upgrade (`?stall=MS`), so both kernel queues fill and the rest waits in the client. At the mark, "
             "with everything sent, the harness reads both ends of the connection from the kernel: what the "
             "client had really not written is what it was given (framed) less what its kernel took "
             "(`bytes_acked + Send-Q`), counted in payload bytes. \"truthful\": `bufferedAmount` within 64 KiB "
             "plus one message plus the unwritten messages' frame headers of it; \"under-reports\" (e.g. 0 while "
             "megabytes wait, bun#31760) or \"over-reports\" beyond. \"counts\": whether its figure includes the "
             "frame headers (told only where they weigh more than 64 KiB). \"unbounded\": `send()` took "
             "everything and the client held it in memory (its RSS growth between the marks beside it); "
             "\"recovered\": every echo back, in order, and `bufferedAmount` 0, timed from the first echo "
             "once the server read again.")
    return [intro, grid, *([Details("Evidence per client: bufferedAmount against the kernel's counters",
                                    [Bullets(evidence)])] if evidence else [])]
