"""benchmarks.search_with_network: a learned network in the planner's search, against the planner."""

from __future__ import annotations

import json

import numpy as np
import pytest

from agents.artifacts.model_players import arena_of
from agents.common.errors import UsageError
from agents.twoplayer.ratings import entrants_of, make_entrant_player
from ballenvs.duel.physics import LEFT
from ballenvs.duel.search import PLANNER_HORIZONS
from ballenvs.duel.two_player_game import TwoPlayerDuel
from benchmarks.search_with_network import PriorPlanner, main
from tests.agents.algorithms.teaching import SUMO_RULES


def test_each_search_plays_the_planner_from_both_sides_and_is_timed(sumo_run, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    searches = ["planner", "lookahead", "model", "leaf:0.5", "prior:3"]
    rows = main([str(sumo_run), "--games", "2", "--searches", *searches, "--no-progress"])
    assert [row["search"] for row in rows] == searches
    for row in rows:
        assert row["first_wins"] + row["second_wins"] + row["draws"] == 2
        assert row["starts"] == 1 and row["first_won_both"] + row["second_won_both"] <= 1
        assert row["ms_a_decision"] > 0 and row["planner_ms"] > 0
    assert json.loads((tmp_path / "search_with_network.json").read_text())["rows"] == rows
    assert "| leaf:0.5 |" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--searches", "leaf:0"], "--searches 'leaf:0': leaf:W takes a weight W in (0, 1]"),
        (["--searches", "leaf:x"], "--searches 'leaf:x': leaf:W takes a weight W in (0, 1]"),
        (["--searches", "deeper"], "--searches 'deeper': valid: planner, lookahead, model, leaf:W, prior:K"),
        (["--searches", "prior:0"], "--searches 'prior:0': prior:K takes a number of actions K in 1..9"),
        (["--searches", "prior:10"], "--searches 'prior:10': prior:K takes a number of actions K in 1..9"),
        (["--games", "1"], "--games"),
    ],
)
def test_bad_searches_and_counts_are_refused_naming_them(sumo_run, argv, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        main([str(sumo_run), *argv])


def test_a_prior_of_every_action_over_the_planners_horizons_plays_a_best_action_of_the_planners(sumo_run):
    arena = arena_of("BallSumo-v0")
    [entrant] = entrants_of(str(sumo_run), ())[-1:]
    planner = arena.make_player("planner", {})
    prior = PriorPlanner(planner, make_entrant_player(entrant, "cpu", "BallSumo-v0", {}), 9, PLANNER_HORIZONS)
    duel, rngs = TwoPlayerDuel(16, obs_type="state", **SUMO_RULES), [np.random.default_rng(i) for i in range(16)]
    duel.reset(rngs)
    chosen = []
    for _ in range(20):
        ours, values = planner.act_with_values(duel.seat(LEFT, rngs))
        played = prior.act(duel.seat(LEFT, rngs))  # the same branches in another order: equal values may swap
        np.testing.assert_array_equal(values[np.arange(16), played], values.max(axis=1))
        chosen.append(played)
        duel.play(ours, rngs[0].integers(9, size=16))
    assert len(np.unique(chosen)) > 2  # positions that ask for different actions


def test_a_prior_searches_only_the_networks_best_actions(sumo_run):
    [entrant] = entrants_of(str(sumo_run), ())[-1:]
    network = make_entrant_player(entrant, "cpu", "BallSumo-v0", {})
    prior = PriorPlanner(arena_of("BallSumo-v0").make_player("planner", {}), network, 2)
    duel, rngs = TwoPlayerDuel(16, obs_type="state", **SUMO_RULES), [np.random.default_rng(i) for i in range(16)]
    duel.reset(rngs)
    for _ in range(10):
        seat = duel.seat(LEFT, rngs)
        network.reset(None)
        best_two = np.argsort(-network.act_with_values(seat)[1], axis=1, kind="stable")[:, :2]
        played = prior.act(seat)
        assert ((best_two == played[:, None]).any(axis=1)).all()
        duel.play(played, rngs[0].integers(9, size=16))


def test_a_built_in_player_is_not_a_network(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="'champion': no such model file or run folder"):
        main(["champion"])
