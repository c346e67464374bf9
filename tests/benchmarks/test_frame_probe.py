"""benchmarks.frame_probe: what the learner's stacked frames tell of the state."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.frame_probe import (
    FEATURES,
    LOST_BELOW,
    PROBE_PLAYERS,
    Recording,
    centroid_velocity,
    fit_probe,
    lost_features,
    main,
    probe,
    probe_figure,
    r_squared,
    record_games,
    stacked_samples,
)
from tests.helpers import refused


def test_r_squared_is_one_for_a_perfect_fit_and_zero_for_the_mean():
    actual = np.array([[1.0, 2.0], [3.0, 2.0], [5.0, 2.0]])
    assert r_squared(actual, actual).tolist() == [1.0, 1.0]
    assert r_squared(np.full_like(actual, 3.0), actual)[0] == 0.0


def test_stacks_hold_the_frames_oldest_first_with_zeros_before_a_games_first_frame():
    frames = np.arange(1, 4, dtype=np.uint8)[:, None, None, None] * np.ones((3, 2, 2, 2), np.uint8)  # step t shows t + 1
    alive = np.array([[True, True], [True, True], [True, False]])
    states = np.arange(6, dtype=np.float32).reshape(3, 2, 1)
    stacks, targets, games = stacked_samples(Recording(frames, states, alive), depth=2)
    assert stacks.shape == (5, 2, 2, 2) and games.tolist() == [0, 1, 0, 1, 0]
    assert [s[:, 0, 0].tolist() for s in stacks] == [[0, 1], [0, 1], [1, 2], [1, 2], [2, 3]]
    assert targets[:, 0].tolist() == [0, 1, 2, 3, 4], "a sample's state is its newest frame's"


def test_recorded_games_cover_every_pairing_and_stop_where_each_game_ends():
    recording = record_games(36, games_per_pair=2, seed=0)
    steps, games = recording.alive.shape
    assert games == 2 * len(PROBE_PLAYERS) ** 2 and steps <= 101
    assert recording.frames.shape == (steps, games, 36, 36) and recording.states.shape == (steps, games, len(FEATURES))
    assert recording.alive[0].all()
    ends = recording.alive.sum(axis=0)
    assert all(not recording.alive[end:, game].any() for game, end in enumerate(ends)), "a finished game stays finished"
    assert np.allclose(recording.states[0, :, FEATURES.index("time left")], 1.0)


def test_a_feature_the_frames_do_not_show_is_reported_lost_and_one_they_show_is_kept():
    rng = np.random.default_rng(0)
    samples = 800
    shown, hidden = rng.uniform(size=samples), rng.uniform(size=samples)
    frames = np.zeros((samples, 1, 36, 36), np.uint8)
    frames[np.arange(samples), 0, :, (shown * 35).astype(int)] = 255  # a bar whose column is the feature
    scores = fit_probe(frames, np.stack([shown, hidden], axis=1).astype(np.float32), np.arange(samples) % 5 == 0, epochs=10)
    assert scores[0] > 0.8 and scores[1] < LOST_BELOW
    assert lost_features(dict(zip(("shown", "hidden"), scores))) == ["hidden"]


@pytest.mark.slow
def test_one_frame_tells_where_the_balls_are_but_not_how_fast_they_move_up_and_down():
    scores = probe(record_games(36, games_per_pair=5, seed=0), depth=1, epochs=3)
    assert scores["own x"] > 0.8 and scores["own y"] > 0.8
    assert "own vy" in lost_features(scores) and "other vy" in lost_features(scores)


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--stacks", "0"], "--stacks must be in 1..8, got 0"),
        (["--stacks", "4", "100"], "--stacks must be in 1..8, got 100"),  # not 15 GiB of stacks
        (["--sizes", "2000"], "--sizes must be in 36..128, got 2000"),
        (["--games", "1"], "--games must be in 5..200, got 1"),
        (["--seed", "-1"], "--seed must be in 0..4294967295, got -1"),
        (["--threads", "0"], "--threads must be in 1..1024, got 0"),
        (["--epochs", "x"], "argument --epochs: invalid int value: 'x'"),
    ],
)
def test_bad_sizes_and_budgets_are_refused_in_one_line(argv, message, capsys):
    assert message in refused(capsys, main, argv)


def test_subpixel_frames_carry_the_velocity_that_plain_36_pixel_frames_lose():
    plain = centroid_velocity(record_games(36, games_per_pair=3, seed=0), depth=2)
    subpixel = centroid_velocity(record_games(36, games_per_pair=3, seed=0, subpixel=True), depth=2)
    assert plain["own vx"] < LOST_BELOW and plain["own vy"] < LOST_BELOW
    assert subpixel["own vx"] > 0.85 and subpixel["own vy"] > 0.85


def test_the_probe_chart_has_a_cell_per_feature_and_frames_with_its_value_and_says_what_it_shows():
    scores = {feature: k / len(FEATURES) for k, feature in enumerate(FEATURES)}
    results = [{"size": 36, "stack": 2, "r2": scores}, {"size": 64, "stack": 4, "r2": scores}]
    results.append({"size": 36, "stack": 2, "centroid_r2": {"own vx": 0.5, "own vy": 0.5}})  # not a probe's row
    fig = probe_figure(results, "plain frames")
    ax, colorbar = fig.axes
    assert [label.get_text() for label in ax.get_xticklabels()] == list(FEATURES)
    assert [label.get_text() for label in ax.get_yticklabels()] == ["36x36, 2 stacked", "64x64, 4 stacked"]
    assert ax.images[0].get_array().shape == (2, len(FEATURES))
    assert sorted(text.get_text() for text in ax.texts) == sorted([f"{score:.2f}" for score in scores.values()] * 2)
    assert "BallSumo-v0" in ax.get_title() and "R²" in ax.get_title()
    assert ax.get_xlabel() and ax.get_ylabel() and "R²" in colorbar.get_ylabel()
