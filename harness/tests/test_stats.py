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
