"""The evaluations a run makes while it trains: which of them keeps the best model."""

from __future__ import annotations

import numpy as np
import pytest

from agents.session import evaluation
from agents.session.console import Console
from agents.session.evaluation import Evaluator, score
from ballenvs.reference import Episodes


class NoLogger:
    def record(self, *args, **kwargs) -> None:
        pass


def games(won: int, lost: int) -> Episodes:
    """Episodes of a game with a winner: ``won`` won, then ``lost`` lost."""
    infos = [{"winner": "left"}] * won + [{"winner": "right"}] * lost
    return Episodes(np.array([1.0] * won + [-1.0] * lost), infos, seed=0)


def unscored(*returns: float) -> Episodes:
    """Episodes of a game that names no winner."""
    return Episodes(np.array(returns), [{}] * len(returns), seed=0)


def evaluations_kept(monkeypatch, tmp_path, evaluations: list[dict[str, Episodes]]) -> list[int]:
    """Which of ``evaluations`` (each: the episodes played against each opponent) saved the best model."""
    played = iter([episodes for evaluation_ in evaluations for episodes in evaluation_.values()])
    monkeypatch.setattr(evaluation, "play_episodes", lambda *args: (episodes := next(played), np.ones(len(episodes.returns))))
    kept: list[int] = []
    evaluator = Evaluator(
        dict.fromkeys(evaluations[0]), 4, 0, tmp_path, NoLogger(), Console(1, enabled=False), lambda: kept.append(step)
    )
    for step in range(len(evaluations)):
        evaluator(None, step)
    return kept


def test_a_player_is_scored_by_its_worst_match_and_a_game_without_winners_by_its_return():
    assert score(0.3, {"chaser": 1.0, "anchor": 0.5}) == 0.5
    assert score(0.3, {}) == 0.3
    assert score(0.3, {"chaser": 1.0, "champion": 0.5}, held_out=("champion",)) == 1.0, "a held-out player never picks"
    assert score(0.3, {"champion": 0.5}, held_out=("champion",)) == 0.3


def test_the_best_model_is_the_later_of_evaluations_that_tie_and_never_one_with_a_weaker_worst_match(monkeypatch, tmp_path):
    kept = evaluations_kept(
        monkeypatch,
        tmp_path,
        [
            {"chaser": games(4, 0), "anchor": games(3, 1)},  # worst 0.75: the first is kept
            {"chaser": games(2, 2), "anchor": games(4, 0)},  # worst 0.5, though more games won: not kept
            {"chaser": games(4, 0), "anchor": games(3, 1)},  # ties the best: the later is kept
            {"chaser": games(4, 0), "anchor": games(4, 0)},
            {"chaser": games(4, 0), "anchor": games(4, 0)},  # a perfect one ties a perfect one
            {"chaser": games(3, 1), "anchor": games(4, 0)},
        ],
    )
    assert kept == [0, 2, 3, 4]


@pytest.mark.parametrize(("returns", "expected"), [([1.0, 3.0, 2.0, 3.0], [0, 1, 3]), ([5.0, 1.0], [0])])
def test_without_a_winner_the_best_model_is_the_highest_mean_return_the_later_of_equal_ones(
    monkeypatch, tmp_path, returns, expected
):
    kept = evaluations_kept(monkeypatch, tmp_path, [{"": unscored(value, value)} for value in returns])
    assert kept == expected
