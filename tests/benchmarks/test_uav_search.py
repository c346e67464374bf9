"""benchmarks.uav_search: a search on UAVGrid's exact state that plans on a faithful model of the
grid, and plays greedy's move unless another target is clearly better."""

import gymnasium as gym
import numpy as np
import pytest

from agents.common.errors import UsageError
from benchmarks.uav_search import RouteSearch, main


def test_the_search_plans_on_the_grid_as_it_plays():
    """With no new requests the futures are all the one the env will play: the return the search
    plans for greedy's own move is the return greedy then gets, step for step."""
    env = gym.make("UAVGrid-v0", request_prob=0.0)
    env.reset(seed=3)
    search = RouteSearch(env, futures=2, horizon=40, z=2.0)
    returns, first = search.plan()
    assert returns.shape == (search.core.params.n_ues + 1, 2) and first.shape == (search.core.params.n_ues + 1,)
    assert returns[-1, 0] == returns[-1, 1]
    played = sum(float(env.step(int(search.greedy.act()))[1]) for _ in range(40))
    assert returns[-1, 0] == pytest.approx(played, abs=1e-9)


def test_each_episode_is_played_by_both_from_the_same_seed(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    payload = main(["--episodes", "2", "--futures", "2", "--horizon", "3", "--no-progress"])
    assert [episode["episode"] for episode in payload["episodes"]] == [20000, 20001]
    greedy = [episode["greedy"] for episode in payload["episodes"]]
    search = [episode["search"] for episode in payload["episodes"]]
    assert payload["ratio"] == pytest.approx(sum(search) / sum(greedy))
    assert "| 20001 | " in capsys.readouterr().out and (tmp_path / "uav_search.json").is_file()


def test_the_search_moves_towards_a_target_clearly_better_than_greedys():
    env = gym.make("UAVGrid-v0")
    env.reset(seed=20000)
    search = RouteSearch(env, futures=8, horizon=60, z=0.0)
    returns, first = search.plan()
    gains = (returns - returns[-1]).mean(axis=1)
    search.rng = np.random.default_rng(0)  # the same futures again
    expected = first[int(gains.argmax())] if gains.max() > 0 else first[-1]
    assert search.act() == expected


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--futures", "1"], "--futures must be in 2..4096, got 1"),
        (["--z", "nan"], "--z must be a finite number >= 0, got nan"),
        (["--episodes", "0"], "--episodes must be in 1..100000, got 0"),
    ],
)
def test_bad_values_are_refused(argv, message):
    with pytest.raises(UsageError, match=message):
        main(argv)
