import random
import statistics

import pytest

from wsbench.stats import bootstrap_median_ci, summarize


def test_summary_of_known_values() -> None:
    s = summarize([10.0, 12.0, 11.0, 13.0, 9.0])
    assert s is not None
    assert s.median == 11.0 and s.min == 9.0 and s.max == 13.0 and s.n == 5
    assert s.cv == pytest.approx(1.5811388 / 11.0, rel=1e-6)
    assert s.ci95[0] <= s.median <= s.ci95[1]
    assert 9.0 <= s.ci95[0] and s.ci95[1] <= 13.0


def test_single_value_has_no_spread() -> None:
    s = summarize([5.0])
    assert s is not None and s.cv is None and s.ci95 == (5.0, 5.0)
    assert summarize([]) is None


def test_bootstrap_is_deterministic_and_narrows_with_agreement() -> None:
    wide = [1.0, 5.0, 9.0, 2.0, 8.0]
    assert bootstrap_median_ci(wide) == bootstrap_median_ci(wide)
    lo, hi = bootstrap_median_ci([4.0, 4.0, 4.0, 4.0, 4.1])
    assert hi - lo <= 0.1


def _coverage(level: float, trials: int = 200, n: int = 41) -> tuple[float, float]:
    """How often the interval holds the true median of N(0, 1) (zero), and its median
    width, over ``trials`` seeded samples of ``n`` values."""
    rng = random.Random(2026)
    held, widths = 0, []
    for trial in range(trials):
        data = [rng.gauss(0.0, 1.0) for _ in range(n)]
        lo, hi = bootstrap_median_ci(data, level=level, seed=trial + 1)
        held += lo <= 0.0 <= hi
        widths.append(hi - lo)
    return held / trials, statistics.median(widths)


def test_the_interval_has_the_level_it_claims() -> None:
    """Pinned against a known distribution: the median of 41 draws of N(0, 1) has a
    standard error of sqrt(pi / 2) / sqrt(41) = 0.196, so a 95 % interval is about
    2 x 1.96 x 0.196 = 0.77 wide and holds zero in about 95 % of samples; a 50 % one is
    about 0.26 wide and holds it about half the time. An interval of the wrong level (a
    wrong percentile index, too few resamples) fails here, which lo <= median <= hi cannot."""
    covered, width = _coverage(0.95)
    assert 0.90 <= covered <= 0.99, covered
    assert 0.77 * 0.75 <= width <= 0.77 * 1.25, width
    covered, width = _coverage(0.50)
    assert 0.35 <= covered <= 0.65, covered
    assert 0.26 * 0.6 <= width <= 0.26 * 1.4, width
