"""Few-seed summaries as the field reports them (Agarwal et al., 2021, "Deep RL at the Edge of the
Statistical Precipice"), through rliable: the interquartile mean (IQM) of the seeds' scores with a
95% stratified bootstrap confidence interval, the same for a learning curve point by point, and
performance profiles (the share of runs scoring above each threshold).

A mean and a standard deviation of 3 to 5 seeds hide how few they are; the IQM ignores the best
and worst quarter of the runs and its interval says how far 3 to 5 seeds can be trusted.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import numpy as np

#: Bootstrap resamples (rliable's own default is 50,000; 2,000 keep a report under a second).
REPS = 2000
CONFIDENCE = 0.95


@dataclass(frozen=True)
class Interval:
    """An IQM over seeds and its ``CONFIDENCE`` bootstrap interval [low, high]."""

    iqm: float
    low: float
    high: float

    def format(self, spec: str = ".3f") -> str:
        """e.g. ``0.412 [0.305, 0.520]``; ``spec`` formats all three (``.0%`` for win rates)."""
        return f"{format(self.iqm, spec)} [{format(self.low, spec.lstrip('+'))}, {format(self.high, spec.lstrip('+'))}]"


def _iqm(scores: np.ndarray) -> np.ndarray:
    """The IQM of each column of (runs, points) scores: rliable's ``aggregate_iqm`` (scipy's 25%
    trimmed mean) of every column in one call, where one call a column made each bootstrap
    resample of a learning curve cost a call per point (a re-plot took 30 s, nearly all of it here).
    scipy's own steps, in numpy: its trim_mean's argument checks cost a millisecond a call, two
    thirds of a report's bootstrap, and give the same numbers (the same partition, the same mean)."""
    runs = np.asarray(scores, dtype=np.float64)
    cut = int(0.25 * runs.shape[0])
    kept = np.partition(runs, (cut, runs.shape[0] - cut - 1), axis=0)[cut : runs.shape[0] - cut]
    return np.mean(kept, axis=0)


@contextmanager
def _seeded(seed: int) -> Iterator[np.random.RandomState]:
    """rliable draws its resamples from numpy's global generator: seeded here for repeatable
    intervals, and given back as it was. arch's notice that its random_state argument (which
    rliable 1.2 passes) will go is silenced: it is theirs to change, not our users' to read."""
    state = np.random.get_state()
    np.random.seed(seed)
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message="random_state is deprecated", category=FutureWarning)
            yield np.random.RandomState(seed)
    finally:
        np.random.set_state(state)


def _estimates(runs: np.ndarray, reps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """rliable's point estimates and (2, points) interval of :func:`_iqm` over ``runs`` (runs, points)."""
    from rliable import library

    with _seeded(seed) as random_state:
        points, intervals = library.get_interval_estimates(
            {"scores": runs}, _iqm, reps=reps, confidence_interval_size=CONFIDENCE, random_state=random_state
        )
    return points["scores"], intervals["scores"]


def iqm_interval(values: Sequence[float], reps: int = REPS, seed: int = 0) -> Interval:
    """The IQM of one score per seed and its stratified bootstrap interval (seeded: the same
    values always give the same interval)."""
    runs = np.asarray(values, dtype=np.float64).reshape(-1, 1)
    if not len(runs):
        raise ValueError("an interval needs at least one seed's score")
    point, interval = _estimates(runs, reps, seed)
    return Interval(float(point[0]), float(interval[0, 0]), float(interval[1, 0]))


def iqm_curve(curves: np.ndarray, reps: int = REPS, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(seeds, points) learning curves: the IQM at each point and its interval's low and high."""
    point, interval = _estimates(np.asarray(curves, dtype=np.float64), reps, seed)
    return point, interval[0], interval[1]


def performance_profiles(
    scores: Mapping[str, Sequence[float]], thresholds: np.ndarray, reps: int = REPS
) -> tuple[dict[str, np.ndarray], dict[str, np.ndarray]]:
    """For each agent, the share of its runs scoring above each threshold, and its interval."""
    from rliable import library

    score_dict = {label: np.asarray(values, dtype=np.float64).reshape(-1, 1) for label, values in scores.items()}
    with _seeded(0):
        return library.create_performance_profile(
            score_dict, thresholds, custom_profile_func=_shares_above, reps=reps, confidence_interval_size=CONFIDENCE
        )


def _shares_above(scores: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    """The share of ``scores`` above each threshold: rliable's score distribution, every threshold in
    one comparison where its ``np.vectorize`` made a Python call a threshold and a resample (a
    report's profiles took 7 s); the same shares (counts over the same total)."""
    return np.mean(np.asarray(scores).reshape(-1, 1) > np.asarray(thresholds).reshape(1, -1), axis=0)


def plot_performance_profiles(ax: Any, scores: Mapping[str, Sequence[float]], xlabel: str) -> None:
    """rliable's performance-profile plot of ``scores`` on ``ax``, thresholds spanning every score."""
    from rliable import plot_utils

    values = np.concatenate([np.asarray(v, dtype=np.float64) for v in scores.values()])
    low, high = float(values.min()), float(values.max())
    margin = max(high - low, 1e-6) * 0.05
    thresholds = np.linspace(low - margin, high + margin, 101)
    profiles, intervals = performance_profiles(scores, thresholds)
    plot_utils.plot_performance_profiles(
        profiles, thresholds, performance_profile_cis=intervals, ax=ax, xlabel=xlabel, ylabel="share of runs scoring above"
    )
