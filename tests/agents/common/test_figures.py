"""The figures agents.compare draws, read back from their artists: each legend entry is its agent's
line, in the colour of that agent's line and band; axes labelled; the title names the env."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D

from agents.common.studies.comparison import curves_figure, profiles_figure

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
