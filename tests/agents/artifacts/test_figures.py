"""The figures the commands draw (agents.compare's curves and profiles, agents.league's Elo), read
back from their artists: each legend entry is its series' line, in that series' colour; axes
labelled; the title names the env."""

from __future__ import annotations

import numpy as np
import pytest
from matplotlib.collections import PolyCollection
from matplotlib.colors import to_rgba
from matplotlib.lines import Line2D

from agents.studies.comparison import curves_figure, profiles_figure
from agents.twoplayer.ratings import Entrant, elo_figure

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


def test_the_evaluation_curves_draw_each_run_in_its_legend_colour_and_name_the_env_and_metric():
    from benchmarks.eval_curves import curves_figure

    steps = np.array([100.0, 200.0, 300.0])
    curves = {(run, metric): (steps, np.array([0.2, 0.5, 0.9]) * k) for k, run in enumerate(["a", "b"], 1)
              for metric in ("eval/win_rate_vs_pusher", "eval/mean_reward")}  # fmt: skip
    labels = {"a": "custom seed 0", "b": "custom seed 1"}
    fig = curves_figure(curves, ["a", "b"], ["eval/win_rate_vs_pusher", "eval/mean_reward"], labels, ["BallSumo-v0"])
    wins, reward = fig.axes
    assert "BallSumo-v0" in fig._suptitle.get_text()
    for ax, metric in ((wins, "eval/win_rate_vs_pusher"), (reward, "eval/mean_reward")):
        assert ax.get_title() == metric and ax.get_xlabel() == "env steps" and metric in ax.get_ylabel()
        lines = [line for line in ax.get_lines() if line.get_label() in labels.values()]
        entries = {
            text.get_text(): handle for text, handle in zip(ax.get_legend().get_texts(), ax.get_legend().legend_handles)
        }
        assert set(entries) == set(labels.values())
        for line in lines:
            assert entries[line.get_label()].get_color() == line.get_color(), "each entry in its line's colour"
    assert wins.get_lines()[0].get_ydata().tolist() == [20.0, 50.0, 90.0], "win rates in percent"
    assert reward.get_lines()[0].get_ydata().tolist() == [0.2, 0.5, 0.9], "another metric as it is"


def test_the_tuning_charts_are_titled_with_what_they_show_the_study_and_the_env():
    import optuna

    from agents.studies.tuning import tuning_figures

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(study_name="uav-custom", direction="maximize", sampler=optuna.samplers.RandomSampler(0))
    study.optimize(
        lambda trial: trial.suggest_float("gamma", 0.9, 0.999) + trial.suggest_int("batch_size", 16, 64), n_trials=6
    )
    figures = tuning_figures(study, "UAVGrid-v0", with_importances=True)
    assert set(figures) == {"history.png", "parallel.png", "importances.png"}
    for name, figure in figures.items():
        title = figure._suptitle.get_text()
        assert "study uav-custom on UAVGrid-v0" in title, (name, title)
    parallel = figures["parallel.png"].axes[0]  # an axis per hyperparameter, named by its tick
    assert {"Objective Value", "gamma", "batch_size"} <= {tick.get_text() for tick in parallel.get_xticklabels()}
    importances = figures["importances.png"].axes[0]
    assert importances.get_xlabel() and {"gamma", "batch_size"} <= {t.get_text() for t in importances.get_yticklabels()}
    history = figures["history.png"].axes[0]
    assert history.get_xlabel() == "Trial" and history.get_ylabel() == "Objective Value"
    legend = {text.get_text() for text in history.get_legend().get_texts()}
    assert {"Objective Value", "Best Value"} <= legend
