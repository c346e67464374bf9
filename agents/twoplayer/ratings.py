"""A league of two-player models and built-in players: who they are, the games between every pair,
and Elo ratings fitted to them (Bradley-Terry with a prior of virtual draws, and their standard
errors from the posterior's curvature), written as tables and a plot.
The game is the env id's (:class:`ballenvs.reference.Arena`); ``python -m agents.league`` runs it.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.artifacts.figures import pyplot, save_png
from agents.artifacts.model_players import arena_of, model_player
from agents.artifacts.models import PLAYED_MODELS, SNAPSHOTS, find_model, snapshot_steps
from agents.artifacts.runs import (
    FINAL_MODEL,
    atomic_path,
    model_file,
    read_config,
    read_summary,
)
from agents.common.configuration.registry import MODEL_SUFFIXES
from agents.common.errors import UsageError, refuse_repeats
from agents.session.console import counting_from
from ballenvs.reference import reference_for

ELO_SCALE = 400.0
MEAN_RATING = 1000.0
_STEPS = re.compile(r"_(\d+)_steps")


@dataclass
class Entrant:
    """One player of the league: its name, how to make it play, and where it comes from."""

    name: str
    spec: Any  # a built-in name, or (model path, run folder)
    run: str = ""  # the run folder of a model
    steps: int | None = None  # its training step, for snapshots and final models


def model_entrant(path: str | Path, names: tuple[str, ...] = PLAYED_MODELS) -> Entrant:
    """One model as a player: a model file, a self-play snapshot, or a run folder's first of ``names``."""
    path = Path(path)
    if path.is_file() and path.parent.name == SNAPSHOTS:
        run = _run_name(path.parent.parent)
        steps = snapshot_steps(path)
        return Entrant(f"{run}@{steps}", (path, path.parent.parent), run, steps)
    model, run_dir = find_model(path, names)
    run = _run_name(run_dir)
    return Entrant(f"{run}/{model.stem}", (model, run_dir), run, _steps_of(model))


def entrants_of(argument: str, builtins: tuple[str, ...]) -> list[Entrant]:
    """The players one command-line argument names: a built-in player, a model file, or a run
    folder (with snapshots: each snapshot and its final model)."""
    if argument in builtins:
        return [Entrant(argument, argument)]
    path = Path(argument)
    if not path.exists():
        raise UsageError(f"player {argument!r}: not a built-in player ({', '.join(builtins)}), a model file or a run folder")
    if not (path.is_dir() and (path / SNAPSHOTS).is_dir()):
        return [model_entrant(path)]
    run = _run_name(path)
    found = [
        Entrant(f"{run}@{snapshot_steps(snapshot)}", (snapshot, path), run, snapshot_steps(snapshot))
        for snapshot in sorted((path / SNAPSHOTS).glob("snapshot_*_steps.pt"), key=snapshot_steps)
    ]
    final = model_file(path, FINAL_MODEL, MODEL_SUFFIXES)
    if final is not None:
        found.append(Entrant(f"{run}@final", (final, path), run, _final_steps(path, read_config(path).get("timesteps"))))
    return found


def entrants(arguments: list[str], builtins: tuple[str, ...]) -> list[Entrant]:
    """The players named on the command line, each different, at least two."""
    found = [entrant for argument in arguments for entrant in entrants_of(argument, builtins)]
    names = [e.name for e in found]
    refuse_repeats("players", names)
    if len(found) < 2:
        raise UsageError(f"a league needs at least two players, got {names}")
    return found


def _run_name(run_dir: Path) -> str:
    """A run as <algo>/<env>_<n>: runs of different trainers share folder names."""
    return f"{run_dir.parent.name}/{run_dir.name}"


def _steps_of(path: Path) -> int | None:
    match = _STEPS.search(path.name)
    return int(match.group(1)) if match else None


def _final_steps(run_dir: Path, fallback: Any) -> int | None:
    return read_summary(run_dir)["total_steps"] if (run_dir / "summary.yml").is_file() else fallback


def model_env_id(entrant: Entrant) -> str | None:
    """The env id a model was trained on (None for a built-in player)."""
    return None if isinstance(entrant.spec, str) else read_config(entrant.spec[1])["env_id"]


def make_entrant_player(entrant: Entrant, device: str, env_id: str, env_kwargs: dict[str, Any]) -> Any:
    """A :class:`ballenvs.game.Player` of ``env_id``'s game: a built-in one, or a model that sees
    the game through its own observation settings and frame stack."""
    arena = arena_of(env_id)
    if isinstance(entrant.spec, str):
        try:
            return arena.make_player(entrant.spec, env_kwargs)
        except ValueError as error:  # the champion's file damaged (NpzError), the game's options refused
            raise UsageError(f"player {entrant.name}: {error}") from None
    model_path, run_dir = entrant.spec
    config = read_config(run_dir)
    model_arena = reference_for(config["env_id"]).arena if config["env_id"] in _two_player_ids() else None
    if model_arena is None:
        raise UsageError(f"player {entrant.name}: a model of {config['env_id']}, which has no opponent to play")
    return model_player(model_path, run_dir, device, model_arena)


def _two_player_ids() -> tuple[str, ...]:
    import ballenvs

    return tuple(env_id for env_id in ballenvs.ENV_IDS if reference_for(env_id).arena is not None)


# -- Elo ------------------------------------------------------------------------------------------


def fit_elo(scores: np.ndarray, games: np.ndarray, iterations: int = 2000) -> np.ndarray:
    """Ratings that make the observed scores most likely. ``scores[i, j]``: what i scored
    against j (wins + draws / 2), ``games[i, j]``: how many they played. The expected score of
    i against j is 1 / (1 + 10 ** ((r_j - r_i) / 400)); the ratings average 1000.

    Fitted with the minorization-maximization updates of the Bradley-Terry model (Hunter,
    2004); a player who won or lost every game gets a finite rating from a prior of one drawn
    game against a player rated 1000, which keeps every rating defined."""
    return fit_elos(scores[None], games[None], iterations)[0]


def fit_elos(scores: np.ndarray, games: np.ndarray, iterations: int = 2000) -> np.ndarray:
    """:func:`fit_elo` of many leagues at once, (leagues, n, n) tables: each league's updates are
    its own and stop when its ratings settle, as one fit alone would (the same numbers), but every
    update is one array operation over the leagues still moving, not a Python loop a league (a
    bootstrap's 200 fits took 12 s, one at a time)."""
    leagues, n = scores.shape[:2]
    prior = 1.0  # one virtual draw against an average player, in strengths: half a win, half a loss
    strength = np.ones((leagues, n))
    total = scores.sum(axis=2) + prior / 2
    moving = np.arange(leagues)
    itself = np.eye(n, dtype=bool)
    for _ in range(iterations):
        current = strength[moving]
        pair = games[moving] / (current[:, :, None] + current[:, None, :])
        pair[:, itself] = 0.0
        updated = total[moving] / (pair.sum(axis=2) + prior / (current + 1.0))
        updated /= np.exp(np.log(updated).mean(axis=1))[:, None]
        strength[moving] = updated
        moving = moving[~np.isclose(updated, current, rtol=1e-12, atol=0).all(axis=1)]
        if not len(moving):
            break
    ratings = ELO_SCALE * np.log10(strength)
    return ratings - ratings.mean(axis=1, keepdims=True) + MEAN_RATING


def elo_errors(scores: np.ndarray, games: np.ndarray, ratings: np.ndarray) -> np.ndarray:
    """Each rating's standard error, from the curvature of the log posterior at the fitted ratings
    (a Laplace approximation, as BayesElo's intervals): the games' Bradley-Terry likelihood and the
    prior of one virtual draw a player against one rated 1000 (:func:`fit_elos`). The prior keeps it
    finite where a player won or lost every game, and fewer games make it wider; a bootstrap from the
    same games would resample a perfect record into itself and say +- 0."""
    strength = 10 ** ((ratings - MEAN_RATING) / ELO_SCALE)
    won = strength[:, None] / (strength[:, None] + strength[None, :])  # i's expected score against j
    weight = games * won * won.T  # each pair's information, in natural-log strengths
    np.fill_diagonal(weight, 0.0)
    virtual = strength / (strength + 1.0)
    information = np.diag(weight.sum(axis=1) + virtual * (1.0 - virtual)) - weight
    covariance = np.linalg.inv(information)
    centred = np.eye(len(ratings)) - 1.0 / len(ratings)  # the ratings are reported about their mean
    variance = np.diag(centred @ covariance @ centred.T)
    return ELO_SCALE / np.log(10.0) * np.sqrt(np.maximum(variance, 0.0))


def tables(results: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores and games per pair from (wins, draws, losses) triples of i against j, i < j."""
    n = len(results)
    scores, games = np.zeros((n, n)), np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            wins, draws, losses = results[i, j]
            scores[i, j], scores[j, i] = wins + draws / 2, losses + draws / 2
            games[i, j] = games[j, i] = wins + draws + losses
    return scores, games


# -- the league -----------------------------------------------------------------------------------


def play_league(
    players: list[Any],
    games: int,
    seed: int,
    env_id: str,
    env_kwargs: dict[str, Any],
    results: np.ndarray | None = None,
    on_pair: Callable[[int, int, int], None] | None = None,
    on_games: Callable[[int], None] | None = None,
) -> np.ndarray:
    """Every pair plays ``games`` games of ``env_id``'s game, half with each on the left; (wins,
    draws, losses) of i against j, written into ``results`` (if given) pair by pair, so that an
    interrupted league keeps the pairs it played; ``on_pair(i, j, count)`` after each pair,
    ``on_games(played)`` after every step with the games over so far, every pair's counted."""
    arena = arena_of(env_id)
    n = len(players)
    results = np.zeros((n, n, 3), dtype=np.int64) if results is None else results
    count = 0
    for i in range(n):
        for j in range(i + 1, n):
            progress = counting_from(on_games, count * games)
            outcome = arena.play_pairs(players[i], players[j], games, seed + 1000 * i + j, env_kwargs, progress)
            results[i, j] = outcome["first_wins"], outcome["draws"], outcome["second_wins"]
            count += 1
            if on_pair is not None:
                on_pair(i, j, count)
    return results


def write_outputs(
    folder: Path, league: list[Entrant], results: np.ndarray, ratings: np.ndarray, errors: np.ndarray, env_id: str
) -> str:
    order = np.argsort(-ratings)
    scores, games = tables(results)
    with atomic_path(folder / "league.csv") as tmp, open(tmp, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["player", "run", "steps", "games", "score", "elo", "elo_std"])
        for k in order:
            e = league[k]
            writer.writerow(
                [
                    e.name,
                    e.run,
                    "" if e.steps is None else e.steps,
                    int(games[k].sum()),
                    scores[k].sum(),
                    round(ratings[k], 1),
                    round(errors[k], 1),
                ]
            )
    with atomic_path(folder / "results.csv") as tmp, open(tmp, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["player", "opponent", "wins", "draws", "losses"])
        for i in range(len(league)):
            for j in range(i + 1, len(league)):
                writer.writerow([league[i].name, league[j].name, *results[i, j].tolist()])
    lines = ["# League", "", "| rank | player | Elo | +- | games | score |", "|---:|---|---:|---:|---:|---:|"]
    for rank, k in enumerate(order, 1):
        played = int(games[k].sum())
        share = scores[k].sum() / max(played, 1)
        lines.append(f"| {rank} | {league[k].name} | {ratings[k]:.0f} | {errors[k]:.0f} | {played} | {share:.0%} |")
    lines += [
        "",
        "Elo fitted to every game (a win 1, a draw 1/2: on BallDuel-v0 a game stopped by the time limit is",
        "a draw, in BallSumo the clock decides it), mean 1000, with a prior of one virtual draw a player against",
        "one rated 1000 (so a perfect record still has a finite rating); +-: the rating's standard error, from the",
        "posterior's curvature (a Laplace approximation, as BayesElo's), wider with fewer games. Every pair:",
        "results.csv; ratings against training steps: elo.png.",
        "",
    ]
    text = "\n".join(lines)
    with atomic_path(folder / "report.md") as tmp:
        tmp.write_text(text)
    save_png(elo_figure(league, ratings, errors, env_id), folder / "elo.png")
    return text


def elo_figure(league: list[Entrant], ratings: np.ndarray, errors: np.ndarray, env_id: str) -> Any:
    """``elo.png``: each run's snapshots' ratings against their training step (the other players
    as lines across), or, with no steps to plot against, every rating with its error."""
    fig, ax = pyplot().subplots(figsize=(9, 5))
    if any(e.run and e.steps is not None for e in league):
        _plot_against_steps(ax, league, ratings, errors)
    else:  # no training steps to plot against: each rating with its error, best on top (Elo has no zero: no bars)
        order = np.argsort(-ratings)
        ax.errorbar(ratings[order], [league[k].name for k in order], xerr=errors[order], fmt="o", capsize=3)
        ax.axvline(1000, linestyle="--", linewidth=1, color="grey")
        ax.invert_yaxis()
        ax.set_xlabel("Elo (mean 1000, dashed)")
        ax.set_ylabel("player")
        ax.grid(alpha=0.3, axis="x")
    ax.set_title(f"{env_id}: every player's Elo from the round robin (bars: standard errors)", fontsize=11)
    fig.tight_layout()
    return fig


def _plot_against_steps(ax: Any, league: list[Entrant], ratings: np.ndarray, errors: np.ndarray) -> None:
    """Each run's snapshots' rating against their training step; the other players as lines across."""
    for run in sorted({e.run for e in league if e.run}):
        points = sorted((e.steps, ratings[k], errors[k]) for k, e in enumerate(league) if e.run == run and e.steps is not None)
        if points:
            steps, elo, err = (np.array(column) for column in zip(*points))
            ax.errorbar(steps, elo, yerr=err, marker="o", capsize=3, label=run)
    for k, e in enumerate(league):
        if e.steps is None:  # built-in players, and models of no known step
            ax.axhline(ratings[k], linestyle="--", linewidth=1, color="grey")
            ax.annotate(
                e.name,
                (1.0, ratings[k]),
                xycoords=("axes fraction", "data"),
                xytext=(-4, 3),
                textcoords="offset points",
                ha="right",
                fontsize=9,
            )
    ax.set_xlabel("training step of the snapshot")
    ax.set_ylabel("Elo (mean 1000)")
    ax.grid(alpha=0.3)
    ax.legend(loc="lower right")
