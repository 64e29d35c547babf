"""backpressure.py's verdict from a sample's marks and result, and tcp_ends.py's reading of
ss: a client whose bufferedAmount is what it has not written is truthful (counting its
frame headers or not), one reporting 0 while megabytes wait under-reports, one reporting
more than it was given over-reports; no reading, no verdict, with the reason."""

from __future__ import annotations

from typing import Any

from wsbench import backpressure, tcp_ends

SS = """0      0       127.0.0.1:41000 127.0.0.1:52000
\t cubic bytes_sent:165 bytes_acked:166 bytes_received:129
0      0       127.0.0.1:52000 127.0.0.1:41000
\t cubic bytes_sent:129 bytes_acked:129 bytes_received:165
0      9       127.0.0.1:41001 127.0.0.1:8080
\t cubic bytes_acked:1
"""


def _end(port: int, recvq: int = 0, sendq: int = 0, received: int = 0, acked: int = 0) -> dict[str, int]:
    return {"port": port, "recvq": recvq, "sendq": sendq, "bytes_received": received, "bytes_acked": acked,
            "bytes_sent": acked, "bytes_retrans": 0, "notsent": sendq}


def _extra(buffered: int, later_handed: int = 0, size: int = 65536, messages: int = 512) -> dict[str, Any]:
    """512 messages sent; the client's kernel took 4 MiB + 100 header bytes since the mark begin."""
    frame = messages * (size + (4 if size < 65536 else 10) + 4)
    begin = {"client": _end(41000, acked=166), "server": _end(41000, received=165)}
    full = {"client": _end(41000, sendq=(4 << 20) - 128 * 1024, acked=166 + 128 * 1024 + 100),
            "server": _end(41000, recvq=128 * 1024 + 100, received=165 + 128 * 1024 + 100)}
    later = {"client": dict(full["client"], sendq=full["client"]["sendq"] + later_handed), "server": full["server"]}
    return {"sent_bytes": messages * size, "frame_bytes": frame, "sent_messages": messages, "message_bytes": size,
            "buffered_at_mark": buffered, "recovered": True, "recover_ms": 120.0, "send_threw": None,
            "send_returned": [],
            "marks": {"begin": {"client_rss_kib": 50_000, "tcp": {"connections": [begin]}},
                      "full": {"client_rss_kib": 80_000, "tcp": {"connections": [full]},
                               "tcp_later": {"connections": [later]}}}}


def test_ss_is_read_as_both_ends_of_each_connection_to_the_port() -> None:
    reading = tcp_ends.parse(SS, 52000)
    [conn] = reading["connections"]  # the other port's socket is not ours
    assert conn["client"]["port"] == conn["server"]["port"] == 41000
    assert tcp_ends.handed(conn["client"]) == 166 and tcp_ends.read_by_app(conn["server"]) == 165


def test_the_verdicts() -> None:
    unwritten_frames = 512 * 65550 - (4 << 20) - 100
    unwritten = round(unwritten_frames * 65536 / 65550)
    truthful = backpressure.judge(_extra(unwritten))
    assert truthful["verdict"] == "truthful", truthful
    assert truthful["unwritten_bytes"] == unwritten and truthful["stalled"] and truthful["queues_still"]
    assert truthful["kernel_held_bytes"] == (4 << 20) + 100 and truthful["rss_growth_kib"] == 30_000
    assert truthful["send"] == "accepted every message" and not truthful["bounded"]
    liar = backpressure.judge(_extra(0))
    assert liar["verdict"] == "under-reports" and liar["error_bytes"] == -unwritten
    over = backpressure.judge(_extra(32 << 20))
    assert over["verdict"] == "over-reports"
    moving = backpressure.judge(_extra(unwritten, later_handed=1 << 20))
    assert moving["queues_still"] is False and moving["handed_later_bytes"] == 1 << 20


def test_frame_headers_counted_or_not_are_both_truthful_and_told_apart() -> None:
    messages, size = 16384, 1024
    unwritten_frames = messages * 1032 - (4 << 20) - 100
    payload = round(unwritten_frames * 1024 / 1032)
    with_headers = backpressure.judge(_extra(unwritten_frames, size=size, messages=messages))
    without = backpressure.judge(_extra(payload, size=size, messages=messages))
    assert with_headers["verdict"] == without["verdict"] == "truthful"
    assert with_headers["counts_framing"] is True and without["counts_framing"] is False
    assert backpressure.judge(_extra(payload))["counts_framing"] is None  # 64 KiB messages: cannot tell


def test_nothing_unwritten_at_the_mark_no_verdict() -> None:
    """The stall was over (or the kernel took everything): a client reading 0 would pass."""
    extra = _extra(0, messages=65)  # 65 x 64 KiB: 64 KiB more than the kernel took
    judged = backpressure.judge(extra)
    assert judged["verdict"] is None and "nothing to tell" in judged["why"], judged


def test_no_reading_no_verdict() -> None:
    extra = _extra(0)
    extra["marks"]["full"]["tcp"] = "ss (iproute2) is not installed"
    judged = backpressure.judge(extra)
    assert judged["verdict"] is None
    assert judged["why"] == "no socket reading at the mark full: ss (iproute2) is not installed"
    extra["marks"]["full"]["tcp"] = {"connections": []}
    assert "0 connections on the server's port" in backpressure.judge(extra)["why"]
