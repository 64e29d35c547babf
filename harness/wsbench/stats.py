"""Summary statistics for repeated measurements: median, spread, bootstrap interval."""

from __future__ import annotations

import random
import statistics
from dataclasses import asdict, dataclass
from typing import Any, Sequence

BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class Summary:
    n: int
    median: float
    mean: float
    min: float
    max: float
    cv: float | None  # coefficient of variation (stdev / mean); None for n < 2
    ci95: tuple[float, float]  # bootstrap 95 % interval of the median

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize(values: Sequence[float], seed: int = 1) -> Summary | None:
    data = [float(v) for v in values]
    if not data:
        return None
    mean = statistics.fmean(data)
    cv = statistics.stdev(data) / mean if len(data) > 1 and mean else None
    return Summary(len(data), statistics.median(data), mean, min(data), max(data), cv,
                   bootstrap_median_ci(data, seed=seed))


def bootstrap_median_ci(data: Sequence[float], level: float = 0.95, seed: int = 1) -> tuple[float, float]:
    """Percentile bootstrap interval of the median (deterministic for a given seed)."""
    if len(data) < 2:
        return (data[0], data[0])
    rng = random.Random(seed)
    n, mid = len(data), len(data) // 2
    medians = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        resample = sorted(rng.choices(data, k=n))
        medians.append(resample[mid] if n % 2 else (resample[mid - 1] + resample[mid]) / 2)
    medians.sort()
    lo = medians[int((1 - level) / 2 * (len(medians) - 1))]
    hi = medians[int((1 + level) / 2 * (len(medians) - 1))]
    return (lo, hi)


def ratio_of_medians(a: Sequence[float], b: Sequence[float], level: float = 0.95,
                     seed: int = 1) -> tuple[float, float, float] | None:
    """median(a) / median(b) with a percentile-bootstrap interval (both sides resampled)."""
    if not a or not b or statistics.median(b) == 0:
        return None
    rng = random.Random(seed)
    point = statistics.median(a) / statistics.median(b)
    ratios = []
    for _ in range(BOOTSTRAP_RESAMPLES):
        denominator = statistics.median(rng.choices(b, k=len(b)))
        if denominator:
            ratios.append(statistics.median(rng.choices(a, k=len(a))) / denominator)
    ratios.sort()
    lo = ratios[int((1 - level) / 2 * (len(ratios) - 1))]
    hi = ratios[int((1 + level) / 2 * (len(ratios) - 1))]
    return point, lo, hi
