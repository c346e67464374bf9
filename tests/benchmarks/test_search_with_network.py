"""benchmarks.search_with_network: a learned network in the planner's search, against the planner."""

from __future__ import annotations

import json

import pytest

from agents.common.errors import UsageError
from benchmarks.search_with_network import main


def test_each_search_plays_the_planner_from_both_sides_and_is_timed(sumo_run, tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("BALLENVS_BENCH_OUT", str(tmp_path))
    searches = ["planner", "lookahead", "model", "leaf:0.5"]
    rows = main([str(sumo_run), "--games", "2", "--searches", *searches, "--no-progress"])
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
def test_bad_searches_and_counts_are_refused_naming_them(sumo_run, argv, message):
    with pytest.raises(UsageError, match=message.replace("(", r"\(").replace(")", r"\)").replace("[", r"\[")):
        main([str(sumo_run), *argv])


def test_a_built_in_player_is_not_a_network(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match="'champion': no such model file or run folder"):
        main(["champion"])
