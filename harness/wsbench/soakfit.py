"""Soak drift (issue 34, docs/misbehave.md "Soak drift"): what a side keeps of connections
that came and went, as the slope of its resident memory (and open descriptors) against the
cycles done (kind ``cycles``) or the time held (kind ``pinghold``), read at the client's
marks (``cycles-<done>``, ``t-<ms>``: measure.py reads both sides at each).

The fit is least squares with one intercept per repetition (each repetition's series is
centred on its own mean, so a server that carried memory from an earlier repetition only
shifts that series), over the marks after the warm-up share (``WARMUP_SHARE`` of the
series' span: allocators, JIT compilers and pools settle there); its 95 % interval is the
slope's standard error times Student's t. A slope is a leak when the interval excludes 0
and the slope is above the floor: ``FLOOR_B`` bytes per cycle, or, when larger,
``FLOOR_TOTAL_B`` spread over the cycles fitted (growth below that in total is one or two
of an allocator's heap steps, not a trend), and the same holds over the last half of the
fitted span alone (a garbage-collected heap grows for tens of thousands of cycles before
it levels off: such growth is "slowing", not shown to leak); otherwise it is flat within
the noise.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from typing import Any, Iterable, Mapping

WARMUP_SHARE = 0.2  # the first fifth of the series' span is discarded
FLOOR_B = 64.0  # bytes per cycle
FLOOR_TOTAL_B = 256 * 1024  # bytes over the fitted span
MIN_POINTS = 4  # after the warm-up, over all repetitions

CYCLES_MARK = re.compile(r"^cycles-(\d+)$")
TIME_MARK = re.compile(r"^t-(\d+)$")

# Student's t, two-sided 95 % (0.975 quantile), by degrees of freedom
_T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
         11: 2.201, 12: 2.179, 13: 2.160, 14: 2.145, 15: 2.131, 16: 2.120, 17: 2.110, 18: 2.101, 19: 2.093,
         20: 2.086, 22: 2.074, 24: 2.064, 26: 2.056, 28: 2.048, 30: 2.042, 40: 2.021, 60: 2.000, 120: 1.980}


def t975(df: int) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom (the table's next
    lower entry: slightly wide, never narrow; 1.96 beyond 120)."""
    if df < 1:
        raise ValueError("t975 needs at least one degree of freedom")
    if df > 120:
        return 1.960
    return _T975[max(k for k in _T975 if k <= df)]


@dataclass(frozen=True)
class Slope:
    """A fitted slope (y units per x unit) with its 95 % interval."""

    slope: float
    lo: float
    hi: float
    points: int  # marks fitted, over all repetitions
    x_from: float  # the fitted span (the first repetition's): from the end of the warm-up
    x_to: float

    @property
    def half_width(self) -> float:
        return (self.hi - self.lo) / 2


def series(marks: Mapping[str, Any], key: str, pattern: re.Pattern[str] = CYCLES_MARK) -> list[tuple[float, float]]:
    """(x, reading) of every mark whose name matches ``pattern`` (x: its number) and whose
    ``key`` (``server_rss_kib``, ``client_fds``...) was read, by x."""
    out = []
    for name, reading in marks.items():
        m = pattern.match(name)
        value = reading.get(key) if isinstance(reading, dict) else None
        if m and isinstance(value, (int, float)) and not isinstance(value, bool):
            out.append((float(m.group(1)), float(value)))
    return sorted(out)


def after_warmup(points: list[tuple[float, float]], share: float = WARMUP_SHARE) -> list[tuple[float, float]]:
    """The points from ``share`` of the span on (the span from the first x to the last)."""
    if not points:
        return []
    x0, x1 = points[0][0], points[-1][0]
    cut = x0 + share * (x1 - x0)
    return [p for p in points if p[0] >= cut]


def fit(groups: Iterable[list[tuple[float, float]]]) -> Slope | None:
    """Least squares with one intercept per group (a repetition's points), the slope
    shared; None with fewer than MIN_POINTS points in all, or no spread in x."""
    xs: list[float] = []
    ys: list[float] = []
    used = 0
    span: tuple[float, float] | None = None
    for points in groups:
        if len(points) < 2:
            continue
        used += 1
        if span is None:
            span = (points[0][0], points[-1][0])
        mx = statistics.fmean(x for x, _ in points)
        my = statistics.fmean(y for _, y in points)
        xs += [x - mx for x, _ in points]
        ys += [y - my for _, y in points]
    n = len(xs)
    sxx = sum(x * x for x in xs)
    if n < MIN_POINTS or sxx <= 0 or span is None or n - used - 1 < 1:
        return None
    slope = sum(x * y for x, y in zip(xs, ys)) / sxx
    ss_res = sum((y - slope * x) ** 2 for x, y in zip(xs, ys))
    df = n - used - 1
    se = math.sqrt(ss_res / df / sxx)
    half = t975(df) * se
    return Slope(slope, slope - half, slope + half, n, span[0], span[1])


def scaled(s: Slope, factor: float) -> Slope:
    """The same fit in other units (KiB to bytes, per second to per minute...)."""
    lo, hi = sorted((s.lo * factor, s.hi * factor))
    return Slope(s.slope * factor, lo, hi, s.points, s.x_from, s.x_to)


def side_slope(samples: Iterable[Any], key: str, pattern: re.Pattern[str] = CYCLES_MARK,
               factor: float = 1.0, share: float = WARMUP_SHARE) -> Slope | None:
    """The slope of ``key`` over the samples' marks (``factor`` converts: 1024 for RSS in
    KiB to bytes), each sample its own group, after the warm-up."""
    groups = [after_warmup(series(s.extra.get("marks") or {}, key, pattern), share) for s in samples]
    found = fit(groups)
    return scaled(found, factor) if found is not None else None


def late_slope(samples: Iterable[Any], key: str, pattern: re.Pattern[str] = CYCLES_MARK,
               factor: float = 1.0) -> Slope | None:
    """The same slope over the last half of the fitted span only (after the warm-up, from
    the middle on): whether a growth keeps its pace or slows down."""
    return side_slope(samples, key, pattern, factor, share=(1 + WARMUP_SHARE) / 2)


def floor_for(s: Slope, floor: float = FLOOR_B, total: float = FLOOR_TOTAL_B) -> float:
    """The smallest slope called a leak over the span fitted: ``floor`` per unit, or
    ``total`` spread over the span when that is more."""
    span = s.x_to - s.x_from
    return max(floor, total / span) if span > 0 else floor


def verdict(s: Slope, floor: float, unit: str = "bytes per cycle", late: Slope | None = None,
            rising: str = "leaks") -> str:
    """"leaks about X bytes per cycle" (the interval excludes 0, the slope above the floor,
    and, given the ``late`` slope over the last half, that one too: the growth keeps on),
    "grows about X ..., slowing" (the late slope is no leak: a heap or pool still filling up
    when the run ended), "returns about X ..." (downwards), else "flat within the noise
    (±Y ...)", Y the largest slope the interval allows. ``rising`` replaces "leaks" where
    the run cannot tell a leak from a heap not yet collected (a hold shorter than a garbage
    collector's period: "grows")."""
    if s.lo > 0 and s.slope > floor:
        if late is not None and not leaks(late, floor):
            return (f"grows about {_num(s.slope)} {unit}, slowing (last half: {_num(late.slope)} ± "
                    f"{_num(late.half_width)}): not shown to leak")
        return f"{rising} about {_num(s.slope)} {unit}"
    if s.hi < 0 and -s.slope > floor:
        return f"returns about {_num(-s.slope)} {unit}"
    return f"flat within the noise (±{_num(max(abs(s.lo), abs(s.hi)))} {unit})"


def leaks(s: Slope, floor: float) -> bool:
    return s.lo > 0 and s.slope > floor


def _num(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 10 else f"{v:.1f}"
