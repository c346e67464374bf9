"""benchmarks.search_with_network: a learned network in the planner's search, against the planner."""

from __future__ import annotations

import json

import pytest

from agents import custom_train
from agents.common.errors import UsageError
from agents.common.session.cli import run_cli
from benchmarks.search_with_network import main


@pytest.fixture(scope="module")
def state_run(tmp_path_factory):
    """A tiny run of our DQN on BallSumo-v0's state vector."""
    folder = tmp_path_factory.mktemp("state")
    argv = ["--env", "BallSumo-v0", "--opponent", "chaser", "--timesteps", "300", "--n-envs", "2", "--log-dir", str(folder)]
    argv += ["--eval-freq", "0", "--no-progress", "--threads", "1", "--hyperparams", "learning_starts=100", "buffer_size=500"]
    argv += ["policy_kwargs=dict(net_arch=[16])"]
    assert run_cli(custom_train.main, argv) == 0
    return folder / "custom" / "BallSumo-v0_1"


def test_each_search_plays_the_planner_from_both_sides_and_is_timed(state_run, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    searches = ["planner", "lookahead", "model", "leaf:0.5"]
    rows = main([str(state_run), "--games", "2", "--searches", *searches, "--no-progress"])
    assert [row["search"] for row in rows] == searches
    for row in rows:
        assert row["first_wins"] + row["second_wins"] + row["draws"] == 2
        assert row["ms_a_decision"] > 0 and row["planner_ms"] > 0
    assert json.loads((tmp_path / "search_with_network.json").read_text())["rows"] == rows
    assert "| leaf:0.5 |" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--searches", "leaf:0"], "--searches 'leaf:0': leaf:W takes a weight W in (0, 1]"),
        (["--searches", "leaf:x"], "--searches 'leaf:x': leaf:W takes a weight W in (0, 1]"),
        (["--searches", "deeper"], "--searches 'deeper': valid: planner, lookahead, model, leaf:W"),
        (["--games", "1"], "--games"),
    ],
)
def test_bad_searches_and_counts_are_refused_naming_them(state_run, argv, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        main([str(state_run), *argv])


def test_a_built_in_player_is_not_a_network(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="'champion': no such model file or run folder"):
        main(["champion"])
