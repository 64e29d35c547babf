"""What can be read off a repetition, how it is named, and which way is better.

Every metric is computed per repetition from a ``Sample``; the summaries (median,
interval, spread) are taken over repetitions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from . import soakfit

Getter = Callable[[Any], "float | None"]


@dataclass(frozen=True)
class Metric:
    name: str
    header: str
    higher_is_better: bool
    digits: int
    get: Getter


def _field(name: str) -> Getter:
    return lambda s: getattr(s, name)


def _extra(*path: str, scale: float = 1.0) -> Getter:
    def get(s: Any) -> float | None:
        value: Any = s.extra
        for key in path:
            if not isinstance(value, dict) or key not in value:
                return None
            value = value[key]
        return float(value) * scale if isinstance(value, (int, float)) else None
    return get


def _per_message(cpu_field: str) -> Getter:
    def get(s: Any) -> float | None:
        cpu = getattr(s, cpu_field)
        return cpu * 1e6 / s.messages if cpu is not None and s.messages else None
    return get


def _share(cpu_field: str) -> Getter:
    """CPU time over the measured phase's duration: 1.0 is one core kept busy."""
    def get(s: Any) -> float | None:
        cpu = getattr(s, cpu_field)
        return cpu / s.seconds if cpu is not None and s.seconds else None
    return get


def _mib(rss_field: str) -> Getter:
    def get(s: Any) -> float | None:
        kib = getattr(s, rss_field)
        return kib / 1024 if kib else None
    return get


def _mark(name: str, key: str, scale: float = 1.0) -> Getter:
    """A reading taken at the client's WSBENCH-MARK ``name`` (measure.py)."""
    def get(s: Any) -> float | None:
        mark = (s.extra.get("marks") or {}).get(name) or {}
        value = mark.get(key)
        return value * scale if isinstance(value, (int, float)) else None
    return get


def _idle_share(side: str) -> Getter:
    """A side's CPU share while the connections were held idle: its CPU from GO to the
    mark "held" over that time (1.0: one core kept busy)."""
    def get(s: Any) -> float | None:
        mark = (s.extra.get("marks") or {}).get("held") or {}
        cpu, t = mark.get(f"{side}_cpu_s"), mark.get("t_s")
        return cpu / t if isinstance(cpu, (int, float)) and t else None
    return get


def _server_kib_per_conn(s: Any) -> float | None:
    """What each held connection added to the server: (its RSS with them all held − its
    RSS before the client started) / connections."""
    held = ((s.extra.get("marks") or {}).get("held") or {}).get("server_rss_kib")
    before, n = s.extra.get("server_rss_before_kib"), s.extra.get("connections")
    if not isinstance(held, (int, float)) or not isinstance(before, (int, float)) or not n:
        return None
    return (held - before) / n


def _soak(key: str, pattern: Any, factor: float) -> Getter:
    """The slope of a side's reading over one sample's soak marks (soakfit.py), after the
    warm-up: RSS in bytes per cycle, descriptors per 1,000 cycles, ..."""
    def get(s: Any) -> float | None:
        found = soakfit.side_slope([s], key, pattern, factor)
        return found.slope if found is not None else None
    return get


def _hold_per_conn_min(s: Any) -> float | None:
    """The server's RSS slope over a ping hold, in bytes per connection per minute."""
    found = soakfit.side_slope([s], "server_rss_kib", soakfit.TIME_MARK, 1024 * 60_000)
    n = s.extra.get("connections")
    return found.slope / n if found is not None and isinstance(n, int) and n > 0 else None


_ALL = [
    Metric("msgs_per_s", "msgs/s", True, 0, _field("msgs_per_s")),
    Metric("messages", "msgs counted", True, 0, _field("messages")),
    Metric("seconds", "phase s", True, 2, _field("seconds")),
    Metric("mb_per_s", "MB/s", True, 1, _field("mb_per_s")),
    Metric("client_cpu_us_per_msg", "client CPU µs/msg", False, 2, _per_message("client_cpu_s")),
    Metric("server_cpu_us_per_msg", "server CPU µs/msg", False, 2, _per_message("server_cpu_s")),
    Metric("client_cpu_share", "client CPU share", False, 2, _share("client_cpu_s")),
    Metric("server_cpu_share", "server CPU share", False, 2, _share("server_cpu_s")),
    Metric("client_peak_rss_mib", "client peak RSS MiB", False, 1, _mib("client_peak_rss_kib")),
    Metric("server_peak_rss_mib", "server peak RSS MiB", False, 1, _mib("server_peak_rss_kib")),
    Metric("latency_p50_us", "p50 µs", False, 1, _extra("latency_us", "p50")),
    Metric("latency_p90_us", "p90 µs", False, 1, _extra("latency_us", "p90")),
    Metric("latency_p99_us", "p99 µs", False, 1, _extra("latency_us", "p99")),
    Metric("latency_p999_us", "p99.9 µs", False, 1, _extra("latency_us", "p999")),
    Metric("latency_max_us", "max µs", False, 1, _extra("latency_us", "max")),
    Metric("achieved_rate", "achieved msgs/s", True, 0, _extra("achieved_rate")),
    Metric("getter_calls_per_s", "bufferedAmount reads/s", True, 0, _extra("getter_calls_per_s")),
    Metric("drain_ms", "drain ms", False, 2, _extra("drain_ms")),
    Metric("pending_bytes", "pending bytes", True, 0, _extra("pending_bytes")),
    Metric("delivery_ms", "delivery ms", False, 2, _extra("delivery_ms")),
    Metric("close_code", "close code", True, 0, _extra("close_code")),
    Metric("handshakes_per_s", "handshakes/s", True, 0, _extra("handshakes_per_s")),
    Metric("max_rate", "max msgs/s with p99 in limit", True, 0, _extra("max_rate")),
    Metric("connections", "connections held", True, 0, _extra("connections")),
    Metric("opens_per_s", "opens/s", True, 0, _extra("opens_per_s")),
    Metric("server_rss_held_mib", "server RSS held MiB", False, 1, _mark("held", "server_rss_kib", 1 / 1024)),
    Metric("client_rss_held_mib", "client RSS held MiB", False, 1, _mark("held", "client_rss_kib", 1 / 1024)),
    Metric("server_kib_per_conn", "server KiB/conn", False, 2, _server_kib_per_conn),
    Metric("idle_server_cpu_share", "server CPU share idle", False, 3, _idle_share("server")),
    Metric("idle_client_cpu_share", "client CPU share idle", False, 3, _idle_share("client")),
    Metric("delivered_per_s", "delivered msgs/s", True, 0, _extra("delivered_per_s")),
    Metric("latency_p95_us", "p95 µs", False, 1, _extra("latency_us", "p95")),
    Metric("lost", "lost", False, 0, _extra("lost")),
    Metric("max_connections", "largest N with p95 in bound", True, 0, _extra("max_connections")),
    # a server that stops reading (backpressure.py): bufferedAmount at the mark, what was
    # really unwritten then, the client's RSS growth between its marks, and the recovery
    Metric("buffered_at_mark_mib", "bufferedAmount MiB", True, 2, _extra("buffered_at_mark", scale=1 / 2**20)),
    Metric("unwritten_mib", "unwritten MiB", True, 2, _extra("backpressure", "unwritten_bytes", scale=1 / 2**20)),
    Metric("client_rss_growth_mib", "client RSS growth MiB", False, 1,
           _extra("backpressure", "rss_growth_kib", scale=1 / 1024)),
    Metric("recover_ms", "recover ms", False, 1, _extra("recover_ms")),
    # bytes on the wire per message, counted by the kernel on the server's sockets (socket_bytes.py)
    Metric("wire_c2s_per_msg", "wire B/msg c→s", False, 1, _extra("wire", "c2s_per_msg")),
    Metric("wire_s2c_per_msg", "wire B/msg s→c", False, 1, _extra("wire", "s2c_per_msg")),
    # reconnect storms and vanishing peers (report/misbehave_storm.py)
    Metric("storm_s", "all back s", False, 2, _extra("storm_s")),
    Metric("storm_failed", "not back", False, 0, _extra("failed")),
    Metric("freed_s", "freed after s", False, 1, _extra("vanish", "freed_s")),
    # soak drift (soakfit.py): slopes over one repetition's marks
    Metric("server_b_per_cycle", "server B/cycle", False, 1, _soak("server_rss_kib", soakfit.CYCLES_MARK, 1024)),
    Metric("client_b_per_cycle", "client B/cycle", False, 1, _soak("client_rss_kib", soakfit.CYCLES_MARK, 1024)),
    Metric("server_fds_per_kcycle", "server fds/1k cycles", False, 2, _soak("server_fds", soakfit.CYCLES_MARK, 1000)),
    Metric("client_fds_per_kcycle", "client fds/1k cycles", False, 2, _soak("client_fds", soakfit.CYCLES_MARK, 1000)),
    Metric("cycles_per_s", "cycles/s", True, 0, _extra("cycles_per_s")),
    Metric("hold_b_per_conn_min", "server B/conn/min held", False, 1, _hold_per_conn_min),
]
METRICS: dict[str, Metric] = {m.name: m for m in _ALL}

DEFAULT_METRIC = {"slow": "latency_p99_us", "echo": "msgs_per_s", "latency": "latency_p99_us", "openloop": "latency_p99_us",
                  "buffered": "getter_calls_per_s", "request": "delivery_ms",
                  "handshake": "handshakes_per_s", "idle": "opens_per_s", "storm": "storm_s", "fanout": "delivered_per_s",
                  "backpressure": "recover_ms", "cycles": "server_b_per_cycle", "pinghold": "hold_b_per_conn_min"}

_COST = ["client_cpu_us_per_msg", "server_cpu_us_per_msg", "client_peak_rss_mib", "server_peak_rss_mib"]

# The columns each kind's table shows after its ranking metric.
COLUMNS: dict[str, list[str]] = {
    "echo": ["mb_per_s", "messages", "seconds", *_COST],
    "latency": ["latency_p50_us", "latency_p90_us", "latency_p99_us", "latency_p999_us", "latency_max_us", *_COST],
    "openloop": ["achieved_rate", "latency_p50_us", "latency_p90_us", "latency_p99_us", "latency_p999_us",
                 "latency_max_us", *_COST],
    "buffered": ["drain_ms", "pending_bytes", "messages", "seconds", "client_peak_rss_mib"],
    "request": ["close_code", "messages", "seconds", "client_peak_rss_mib", "server_peak_rss_mib"],
    "handshake": ["messages", "seconds", *_COST],
    "sweep": ["latency_p99_us", "client_peak_rss_mib"],
    "idle": ["connections", "server_rss_held_mib", "server_kib_per_conn", "client_rss_held_mib",
             "idle_server_cpu_share", "idle_client_cpu_share"],
    "fanout": ["latency_p50_us", "latency_p99_us", "latency_p999_us", "lost", "server_cpu_us_per_msg",
               "server_peak_rss_mib", "client_cpu_us_per_msg"],
    "ramp": ["connections", "latency_p95_us", "server_peak_rss_mib"],
    "slow": ["latency_p50_us", "latency_p999_us", "lost", "server_peak_rss_mib", "server_cpu_us_per_msg"],
    "storm": ["connections", "storm_failed", "server_peak_rss_mib"],
    "backpressure": ["buffered_at_mark_mib", "unwritten_mib", "client_rss_growth_mib", "client_peak_rss_mib"],
    "cycles": ["client_b_per_cycle", "server_fds_per_kcycle", "client_fds_per_kcycle", "messages", "cycles_per_s"],
    "pinghold": ["connections", "server_peak_rss_mib"],
}
