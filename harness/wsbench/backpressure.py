"""Whether a client's ``bufferedAmount`` tells the truth (the backpressure kind,
clients/workload/backpressure.js; docs/misbehave.md, "A server that stops reading").

The client sends against a server that reads nothing (lws-echo's ``?stall=MS``). At its
mark ``full`` it has given ``send()`` ``frame_bytes`` (payload and client framing); the
harness has read both ends of the connection (tcp_ends.py) there and at the mark ``begin``,
before anything was sent. Between the two marks the client's application handed its kernel
``handed`` bytes (its ``bytes_acked + Send-Q``) and the server's application read ``read``
bytes (its ``bytes_received - Recv-Q``; 0 while the stall is in force). What the client
had really not written at the mark is ``frame_bytes - handed``, in payload bytes (what
``bufferedAmount`` counts: the framing of those messages taken out in proportion), and
``bufferedAmount`` read just before the mark is set beside it:

- truthful: within the tolerance: the framing of the unwritten messages (the spec counts
  application data only, but a client that counts its frames' headers too is not lying
  about what waits: seen, 8 B of every 1 KiB text message), one message (it may be half
  written) and 64 KiB (a runtime may hand its kernel a chunk at a time, up to 64 KiB for
  libuv and tokio, and count it as sent before or after the kernel took it);
- under-reports: lower by more (0 while megabytes wait: bun#31760);
- over-reports: higher by more.

Bounded: the client refused more (``send()`` threw or returned a refusal) rather than keep
everything it was given; its RSS growth between the marks is set beside the bytes it held.
Recovered: every echo came back, in order, and ``bufferedAmount`` reached 0 after the
server read again."""

from __future__ import annotations

from typing import Any

from . import tcp_ends

SLACK_BYTES = 64 * 1024


def _one(mark: dict[str, Any] | None, key: str) -> tuple[dict[str, Any] | None, str | None]:
    """The connection read at ``mark`` (under ``key``), or why there is none."""
    if not isinstance(mark, dict):
        return None, "no such mark"
    reading = mark.get(key)
    if isinstance(reading, str):
        return None, reading
    if not isinstance(reading, dict):
        return None, "no socket reading"
    conns = reading.get("connections") or []
    if len(conns) != 1 or not conns[0].get("client") or not conns[0].get("server"):
        return None, f"{len(conns)} connections on the server's port, not one with both ends"
    return conns[0], None


def judge(extra: dict[str, Any]) -> dict[str, Any]:
    """The figures and the verdict of one sample (its ``extra``: the result line's keys and
    the marks); ``verdict`` None with ``why`` when they cannot be had."""
    marks = extra.get("marks") or {}
    out: dict[str, Any] = {"verdict": None}
    for key in ("sent_bytes", "frame_bytes", "buffered_at_mark", "buffered_max", "recovered", "recover_ms",
                "wait_ms", "drained_ms", "send_threw", "send_returned", "sent_messages", "message_bytes"):
        out[key] = extra.get(key)
    begin, why0 = _one(marks.get("begin"), "tcp")
    full, why1 = _one(marks.get("full"), "tcp")
    later, _ = _one(marks.get("full"), "tcp_later")
    rss0 = (marks.get("begin") or {}).get("client_rss_kib")
    rss1 = (marks.get("full") or {}).get("client_rss_kib")
    out["rss_growth_kib"] = rss1 - rss0 if isinstance(rss0, int) and isinstance(rss1, int) else None
    threw, returned = extra.get("send_threw"), extra.get("send_returned") or []
    out["send"] = f"threw: {threw}" if threw else f"returned {', '.join(returned)}" if returned else "accepted every message"
    out["bounded"] = bool(threw or returned)
    if begin is None or full is None:
        out["why"] = f"no socket reading at the mark {'begin' if begin is None else 'full'}: {why0 or why1}"
        return out
    frame, sent, buffered = extra.get("frame_bytes"), extra.get("sent_bytes"), extra.get("buffered_at_mark")
    if not isinstance(frame, int) or not isinstance(sent, int) or not isinstance(buffered, int) or buffered < 0:
        out["why"] = "the result line lacks frame_bytes, sent_bytes or buffered_at_mark"
        return out
    handed = tcp_ends.handed(full["client"]) - tcp_ends.handed(begin["client"])
    read = tcp_ends.read_by_app(full["server"]) - tcp_ends.read_by_app(begin["server"])
    out.update(handed_bytes=handed, server_read_bytes=read, kernel_held_bytes=handed - read,
               client_sendq=full["client"]["sendq"], client_notsent=full["client"]["notsent"],
               server_recvq=full["server"]["recvq"], stalled=read == 0)
    if later is not None:  # 100 ms after: did the kernel still take bytes from the client?
        out["handed_later_bytes"] = tcp_ends.handed(later["client"]) - tcp_ends.handed(full["client"])
        out["queues_still"] = out["handed_later_bytes"] <= SLACK_BYTES
    unwritten_frames = max(0, frame - handed)
    unwritten = round(unwritten_frames * sent / frame) if frame else 0
    one_frame = frame // max(1, extra.get("sent_messages") or 1)
    tolerance = SLACK_BYTES + one_frame + (unwritten_frames - unwritten)
    out.update(unwritten_frame_bytes=unwritten_frames, unwritten_bytes=unwritten, tolerance_bytes=tolerance,
               error_bytes=buffered - unwritten,
               # closer to the framed bytes than to the payload: it counts its frames' headers too
               # (None: the headers weigh less than the slack, so it cannot be told)
               counts_framing=(abs(buffered - unwritten_frames) < abs(buffered - unwritten)
                               if unwritten_frames - unwritten > SLACK_BYTES else None))
    if handed > frame + SLACK_BYTES:
        out["why"] = (f"the client's kernel took {handed:,} bytes, more than the {frame:,} the workload sent: "
                      "another connection's bytes, or a client that sends more than it was given")
        return out
    if unwritten <= tolerance:  # nothing waited: a liar reading 0 would pass, so no verdict
        out["why"] = (f"only {unwritten:,} B were unwritten at the mark, within the tolerance: nothing to tell "
                      f"(the server read {read:,} B before it; a longer stall or more bytes)")
        return out
    if buffered < unwritten - tolerance:
        out["verdict"] = "under-reports"
    elif buffered > unwritten + tolerance:
        out["verdict"] = "over-reports"
    else:
        out["verdict"] = "truthful"
    out["why"] = (f"bufferedAmount {buffered:,} B at the mark; {unwritten:,} B not yet written "
                  f"({frame:,} B framed sent, {handed:,} B in the kernel or read), tolerance {tolerance:,} B")
    return out
