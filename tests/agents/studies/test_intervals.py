"""Few-seed summaries through rliable: the IQM and its stratified bootstrap interval, performance profiles."""

from __future__ import annotations

import numpy as np
import pytest

from agents.studies.intervals import Interval, iqm_curve, iqm_interval, performance_profiles


def test_the_iqm_is_the_mean_of_the_middle_half_of_the_seeds():
    assert iqm_interval([8, 1, 7, 2, 6, 3, 5, 4]).iqm == pytest.approx((3 + 4 + 5 + 6) / 4)
    assert iqm_interval([0.0, 0.0, 1.0, 100.0]).iqm == pytest.approx(0.5), "the best and worst quarter do not count"


def test_the_interval_holds_the_iqm_within_the_seeds_range_and_is_a_point_when_they_agree():
    interval = iqm_interval([0.2, 0.9, 0.5, 0.7, 0.4])
    assert 0.2 <= interval.low <= interval.iqm <= interval.high <= 0.9 and interval.low < interval.high
    assert iqm_interval([0.5, 0.5, 0.5]) == Interval(0.5, 0.5, 0.5)
    assert iqm_interval([0.1]) == Interval(0.1, 0.1, 0.1)


def test_intervals_are_seeded_and_leave_numpys_generator_as_it_was():
    np.random.seed(11)
    expected = np.random.random()
    np.random.seed(11)
    first = iqm_interval([0.1, 0.4, 0.35, 0.8], seed=3)
    assert np.random.random() == expected
    assert iqm_interval([0.1, 0.4, 0.35, 0.8], seed=3) == first


def test_a_curve_gets_an_iqm_and_interval_at_every_point():
    iqm, low, high = iqm_curve(np.array([[0.0, 1.0], [1.0, 2.0], [2.0, 9.0]]))
    assert iqm.tolist() == pytest.approx([1.0, 4.0]) and (low <= iqm).all() and (iqm <= high).all()


@pytest.mark.parametrize("runs", [1, 2, 3, 5, 8, 13])
def test_a_curves_iqm_is_rliables_at_every_point(runs):
    """All the points of a curve at once, as rliable's aggregate_iqm gives each point alone."""
    from rliable import metrics

    curves = np.random.default_rng(runs).normal(size=(runs, 30))
    expected = [metrics.aggregate_iqm(curves[:, [point]]) for point in range(30)]
    np.testing.assert_allclose(iqm_curve(curves, reps=50)[0], expected, rtol=0, atol=1e-12)


def test_a_performance_profile_is_the_share_of_runs_above_each_threshold():
    profiles, intervals = performance_profiles({"a": [0.1, 0.5, 0.9], "b": [0.2, 0.3]}, np.array([0.0, 0.25, 0.6, 1.0]))
    assert profiles["a"].tolist() == pytest.approx([1.0, 2 / 3, 1 / 3, 0.0])
    assert profiles["b"].tolist() == pytest.approx([1.0, 0.5, 0.0, 0.0])
    assert intervals["a"].shape == (2, 4)


def test_an_interval_formats_as_iqm_and_bounds():
    assert Interval(0.5, 0.25, 0.75).format(".0%") == "50% [25%, 75%]"
    assert Interval(0.123, -0.1, 0.2).format("+.2f") == "+0.12 [-0.10, 0.20]"
    with pytest.raises(ValueError, match="at least one seed"):
        iqm_interval([])


def test_the_fast_iqm_and_profiles_give_rliables_own_numbers():
    """Our IQM and score distribution are scipy's and rliable's steps without their per-call
    overhead: the same numbers, bit for bit, for any number of seeds."""
    from rliable import library
    from scipy import stats

    from agents.studies.intervals import CONFIDENCE, _iqm, _seeded, _shares_above

    rng = np.random.default_rng(3)
    for seeds in range(1, 12):
        scores = rng.normal(size=(seeds, 4))
        assert np.array_equal(_iqm(scores), np.asarray(stats.trim_mean(scores, 0.25, axis=0), dtype=np.float64))
    runs = {"a": rng.normal(size=(5, 1)), "b": rng.integers(0, 3, size=(3, 1)).astype(float)}  # ties at thresholds
    thresholds = np.linspace(-2, 3, 41)
    with _seeded(0):
        theirs = library.create_performance_profile(runs, thresholds, reps=200, confidence_interval_size=CONFIDENCE)
    with _seeded(0):
        ours = library.create_performance_profile(
            runs, thresholds, custom_profile_func=_shares_above, reps=200, confidence_interval_size=CONFIDENCE
        )
    for label in runs:
        assert np.array_equal(theirs[0][label], ours[0][label]) and np.array_equal(theirs[1][label], ours[1][label])
