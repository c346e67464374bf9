"""The figures the commands draw (agents.compare's curves and profiles, agents.league's Elo), read
back from their artists: each legend entry is its series' line, in that series' colour; axes
labelled; the title names the env."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D

from agents.common.studies.comparison import curves_figure, profiles_figure
from agents.twoplayer.league import Entrant, elo_figure

MANIFEST = {"env_id": "UAVGrid-v0", "baselines": {"greedy": 1.0, "random": 0.1}, "heuristic": "greedy"}
MANIFEST |= {"eval_episodes": 5, "hardware": "2 cores"}


def agent(level: float, seeds: int = 3) -> dict:
    rng = np.random.default_rng(int(level * 10))
    x = np.linspace(0, 1000, 6)
    curves = [{"timesteps": x, "seconds": x / 100, "returns": level * x / 1000 + rng.normal(0, 0.05, 6)} for _ in range(seeds)]
    return {"curves": curves, "finals": [level + rng.normal(0, 0.05) for _ in range(seeds)]}


AGENTS = {"Custom": agent(0.8), "PQN": agent(1.2)}


def bands(ax) -> list[PolyCollection]:
    return [artist for artist in ax.collections if isinstance(artist, PolyCollection)]


@pytest.mark.parametrize("draw", [curves_figure, profiles_figure])
def test_each_legend_entry_is_its_agents_line_in_the_colour_of_its_line_and_band(draw):
    fig = draw(AGENTS, MANIFEST)
    ax = fig.axes[0]
    legend = ax.get_legend()
    handles, texts = legend.legend_handles, [text.get_text() for text in legend.get_texts()]
    assert [text.split(" (")[0] for text in texts] == list(AGENTS)
    assert all(isinstance(handle, Line2D) for handle in handles), "a line for each agent, not a band"
    agent_lines = [line for line in ax.get_lines() if line.get_linestyle() == "-"]
    assert len(agent_lines) == len(AGENTS) and len(bands(ax)) == len(AGENTS)
    for handle, line, band in zip(handles, agent_lines, bands(ax)):
        assert to_rgba(handle.get_color()) == to_rgba(line.get_color())
        assert np.allclose(band.get_facecolor()[0][:3], to_rgba(line.get_color())[:3])
    assert len({to_rgba(line.get_color()) for line in agent_lines}) == len(AGENTS), "the agents' colours differ"
    assert all(axis.get_xlabel() for axis in fig.axes) and fig.axes[0].get_ylabel()
    title = fig._suptitle.get_text() if fig._suptitle is not None else ax.get_title()
    assert "UAVGrid-v0" in title


def test_the_leagues_elo_figure_draws_each_runs_snapshots_as_its_own_series_and_names_the_env():
    league = [Entrant("chaser", "chaser"), Entrant("pusher", "pusher")]
    league += [Entrant(f"{run}@{steps}", None, run, steps) for run in ("custom_1", "custom_2") for steps in (100, 200, 300)]
    ratings = np.linspace(900, 1100, len(league))
    fig = elo_figure(league, ratings, np.full(len(league), 20.0), "BallSumo-v0")
    ax = fig.axes[0]
    legend = ax.get_legend()
    series = {text.get_text(): handle for text, handle in zip(legend.get_texts(), legend.legend_handles)}
    assert list(series) == ["custom_1", "custom_2"], "one entry per run; the built-ins are labelled lines across"
    drawn = [container for container in ax.containers if container.get_label() in series]
    for container in drawn:
        line = container.lines[0]
        assert np.array_equal(line.get_xdata(), [100, 200, 300])
        assert to_rgba(series[container.get_label()].get_color()) == to_rgba(line.get_color())
    assert len({to_rgba(c.lines[0].get_color()) for c in drawn}) == 2
    assert {t.get_text() for t in ax.texts} == {"chaser", "pusher"}
    assert ax.get_xlabel() and ax.get_ylabel() and "BallSumo-v0" in ax.get_title()


def test_the_leagues_elo_figure_without_steps_ranks_every_player_best_on_top():
    league = [Entrant(name, name) for name in ("chaser", "pusher", "still")]
    fig = elo_figure(league, np.array([1000.0, 1200.0, 800.0]), np.full(3, 10.0), "BallDuel-v0")
    ax = fig.axes[0]
    assert [label.get_text() for label in ax.get_yticklabels()] == ["pusher", "chaser", "still"]
    assert ax.yaxis_inverted() and ax.get_xlabel() and ax.get_ylabel() and "BallDuel-v0" in ax.get_title()
