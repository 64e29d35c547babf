"""Latency histograms as the clients report them (``latency_hist`` in a latency or
open-loop result line, clients/README.md "Latency histograms"), their sum, and the
percentiles of a histogram taken exactly as the clients take theirs.

The layout is the log-linear (HDR-style) one of ``clients/loadgen/histogram.c`` and
``clients/workload/histogram.js``: a value ``v`` (in units of ``unit_ns``) falls in bucket
``v`` below ``2 * 2**sub_bits``; above, with ``shift = msb(v) - sub_bits``, in bucket
``shift * 2**sub_bits + (v >> shift)``, which holds ``2**shift`` consecutive units. The
load generator counts whole nanoseconds (``integer_values``: a bucket holds the integers
``lo .. lo + w - 1``, its midpoint is ``lo + (w - 1) / 2``); the JavaScript workload floors
microseconds to 1/32 µs (a bucket is the interval ``[lo, lo + w)``, midpoint ``lo + w / 2``).

A percentile q is the midpoint of the bucket that holds the value of rank
``floor(q * count + 0.999999999)`` (at least 1, at most count), clamped to the exact
minimum and maximum: the definition of both clients. So the percentiles of a sum of
histograms are those of the histogram of all their values, exactly: adding histograms
loses nothing that one histogram keeps.
"""

from __future__ import annotations

import bisect
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .errors import WsbenchError

KEY = "latency_hist"
QUANTILES = (("p50", 0.5), ("p90", 0.9), ("p99", 0.99), ("p999", 0.999))
RANK_ROUNDING = 0.999999999  # the clients' ceil(q * count), robust to q * count landing a hair above an integer


@dataclass
class Histogram:
    unit_ns: float
    sub_bits: int
    integer_values: bool
    count: int = 0
    min: float = 0  # exact, in units (0 when empty)
    max: float = 0
    sum: float = 0
    buckets: dict[int, int] = field(default_factory=dict)  # index -> count, no zero counts
    _cache: tuple[Any, list[int], list[int]] | None = field(default=None, repr=False, compare=False)

    @property
    def layout(self) -> tuple[float, int, bool]:
        return (self.unit_ns, self.sub_bits, self.integer_values)

    @classmethod
    def from_json(cls, data: Any, where: str = "latency_hist") -> Histogram:
        """The sparse form of a result line (``{"unit_ns", "sub_bits", "integer_values",
        "count", "min", "max", "sum", "buckets": [[index, count], ...]}``), checked."""
        try:
            buckets: dict[int, int] = {}
            for index, n in data["buckets"]:
                if not isinstance(index, int) or not isinstance(n, int) or index < 0 or n <= 0 or index in buckets:
                    raise ValueError(f"bucket [{index}, {n}]")
                buckets[index] = n
            hist = cls(unit_ns=float(data["unit_ns"]), sub_bits=int(data["sub_bits"]),
                       integer_values=bool(data["integer_values"]), count=int(data["count"]),
                       min=data["min"], max=data["max"], sum=data["sum"], buckets=buckets)
        except (KeyError, TypeError, ValueError) as exc:
            raise WsbenchError(f"{where}: not a latency histogram ({exc})") from None
        if sum(buckets.values()) != hist.count or not 0 < hist.unit_ns or not 0 < hist.sub_bits < 16:
            raise WsbenchError(f"{where}: its buckets hold {sum(buckets.values())} values, its count says "
                               f"{hist.count}")
        return hist

    def to_json(self) -> dict[str, Any]:
        return {"unit_ns": _number(self.unit_ns), "sub_bits": self.sub_bits, "integer_values": self.integer_values,
                "count": self.count, "min": self.min, "max": self.max, "sum": self.sum,
                "buckets": [[i, self.buckets[i]] for i in sorted(self.buckets)]}

    def record(self, value: float) -> None:
        """Count one value (in units) as the clients do (tests, and merging values)."""
        index = bucket_of(int(value) if value >= 0 else 0, self.sub_bits)
        self.buckets[index] = self.buckets.get(index, 0) + 1
        self.min = value if self.count == 0 or value < self.min else self.min
        self.max = value if value > self.max else self.max
        self.count += 1
        self.sum += value

    def midpoint(self, index: int) -> float:
        lo, width = bucket_range(index, self.sub_bits)
        return lo + (width - 1) / 2 if self.integer_values else lo + width / 2

    def quantile_us(self, q: float) -> float:
        """The value at quantile q, in microseconds (0 when empty)."""
        if self.count == 0:
            return 0.0
        rank = min(max(int(q * self.count + RANK_ROUNDING), 1), self.count)
        indexes, cumulative = self._cumulative()
        value = self.midpoint(indexes[bisect.bisect_left(cumulative, rank)])
        value = min(max(value, self.min), self.max)
        return self.to_us(value)

    def _cumulative(self) -> tuple[list[int], list[int]]:
        """The non-empty buckets in order, and how many values lie in each and below it."""
        key = (self.count, len(self.buckets))
        if self._cache is None or self._cache[0] != key:
            indexes = sorted(self.buckets)
            self._cache = (key, indexes, list(itertools.accumulate(self.buckets[i] for i in indexes)))
        return self._cache[1], self._cache[2]

    def to_us(self, units: float) -> float:
        return units * self.unit_ns / 1e3

    def summary(self) -> dict[str, Any]:
        """``latency_us`` as the clients print it: count, min, mean, percentiles, max (µs, 3
        decimals); an empty histogram has none of them (null), never a measured 0."""
        if self.count == 0:
            return {"count": 0, "min": None, "mean": None, **{name: None for name, _ in QUANTILES}, "max": None}
        return {"count": self.count, "min": round(self.to_us(self.min), 3),
                "mean": round(self.to_us(self.sum / self.count), 3),
                **{name: round(self.quantile_us(q), 3) for name, q in QUANTILES},
                "max": round(self.to_us(self.max), 3)}


def bucket_of(units: int, sub_bits: int) -> int:
    sub = 1 << sub_bits
    if units < 2 * sub:
        return units
    shift = units.bit_length() - 1 - sub_bits
    return shift * sub + (units >> shift)


def bucket_range(index: int, sub_bits: int) -> tuple[int, int]:
    """The lowest value (units) of bucket ``index`` and how many units it spans."""
    sub = 1 << sub_bits
    if index < 2 * sub:
        return index, 1
    shift = index // sub - 1
    return (index - shift * sub) << shift, 1 << shift


def add(histograms: Sequence[Histogram], where: str = "histograms") -> Histogram:
    """The sum of histograms of one layout: bucket counts added, the exact extremes and
    sums combined. Histograms of different layouts cannot be added (refused)."""
    if not histograms:
        raise WsbenchError(f"{where}: nothing to add")
    layouts = {h.layout for h in histograms}
    if len(layouts) > 1:
        raise WsbenchError(f"{where}: histograms of different layouts (unit_ns, sub_bits, integer values: "
                           f"{sorted(layouts)}) cannot be added")
    first = histograms[0]
    total = Histogram(first.unit_ns, first.sub_bits, first.integer_values)
    filled = [h for h in histograms if h.count]
    for h in filled:
        for index, n in h.buckets.items():
            total.buckets[index] = total.buckets.get(index, 0) + n
    total.count = sum(h.count for h in filled)
    total.sum = _exact_sum(h.sum for h in filled)
    if filled:
        total.min = min(h.min for h in filled)
        total.max = max(h.max for h in filled)
    return total


def _exact_sum(values: Iterable[float]) -> float:
    values = list(values)
    if all(isinstance(v, int) for v in values):
        return sum(values)
    return math.fsum(values)


def _number(x: float) -> float | int:
    return int(x) if float(x).is_integer() else x
