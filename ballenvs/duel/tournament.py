"""Built-in (or learned) players against each other, many games at once: the matches the arena,
the tools and ``python -m ballenvs.duel.match`` play.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ballenvs.duel.champion import played_as
from ballenvs.duel.physics import LEFT, RIGHT
from ballenvs.duel.roster import make_player
from ballenvs.duel.two_player_game import DEFAULT_GAME_STEPS, DRAW, DUEL_OPTIONS, LEFT_WINS, PLAYING, RIGHT_WINS, TwoPlayerDuel


def match_results(
    left: Any,
    right: Any,
    games: int = 100,
    seed: int = 0,
    max_episode_steps: int = 1000,
    on_step: Callable[[int], None] | None = None,
    **duel_options: Any,
) -> tuple[np.ndarray, np.ndarray]:
    """Play ``games`` games of ``left`` against ``right``, all at once: each game's outcome code
    (see :data:`ballenvs.duel.two_player_game.WINNER_NAMES`; PLAYING for one stopped by the time limit) and
    its length in steps. ``duel_options``: those of :class:`TwoPlayerDuel` (state observations
    unless said). ``on_step(finished)``: after every step, with the games over so far (progress)."""
    duel = TwoPlayerDuel(games, **{"obs_type": "state", **duel_options})
    players = {side: make_player(spec, duel.physics, duel.rules) for side, spec in ((LEFT, left), (RIGHT, right))}
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(games)]
    duel.reset(rngs)
    for player in players.values():
        player.reset(None)
    outcome = np.full(games, PLAYING)
    lengths = np.zeros(games, dtype=np.int64)
    running = np.ones(games, dtype=bool)
    while running.any():
        actions = {side: player.act(duel.seat(side, rngs, player)) for side, player in players.items()}
        _, terminated = duel.play(actions[LEFT], actions[RIGHT])
        # Finished games keep moving in the batch, but their outcome is frozen.
        outcome = np.where(running, duel.winner, outcome)
        lengths += running
        running &= ~(terminated | (duel.steps >= max_episode_steps))
        if on_step is not None:
            on_step(games - int(np.count_nonzero(running)))
    return outcome, lengths


def match_outcomes(
    left: Any, right: Any, games: int = 100, seed: int = 0, max_episode_steps: int = 1000, **duel_options: Any
) -> np.ndarray:
    """Each game's outcome code of :func:`match_results`."""
    return match_results(left, right, games, seed, max_episode_steps, **duel_options)[0]


def play_matches(
    left: Any, right: Any, games: int = 100, seed: int = 0, max_episode_steps: int = 1000, **duel_options: Any
) -> dict[str, float]:
    """The outcome rates of :func:`match_outcomes`."""
    outcome = match_outcomes(left, right, games, seed, max_episode_steps, **duel_options)
    return {
        "left_wins": float(np.mean(outcome == LEFT_WINS)),
        "right_wins": float(np.mean(outcome == RIGHT_WINS)),
        "draws": float(np.mean(outcome == DRAW)),
        "unfinished": float(np.mean(outcome == PLAYING)),
    }


def time_limit(options: dict[str, Any]) -> int:
    """The step at which a game under these options reaches its time limit: the clock's (``game_steps``)
    where the time limit decides, else ``max_episode_steps``."""
    limit = options.get("max_episode_steps", DEFAULT_GAME_STEPS)
    if options.get("time_limit_rule") == "nearer_centre":
        limit = min(limit, options.get("game_steps", DEFAULT_GAME_STEPS))
    return limit


def play_pairs(
    first: Any, second: Any, games: int = 100, seed: int = 0, on_step: Callable[[int], None] | None = None, **options: Any
) -> dict[str, Any]:
    """``games`` games between two players, half with each on the left, on the same seeded
    starts: how many each won (``first_wins``, ``second_wins``), how many were drawn (both out at
    once, or undecided at the time limit), how many reached the time limit (``time_outs``; on
    BallSumo-v0 the ball nearer the centre won those) and the games' mean length. Game k of each
    half starts alike, so each of the ``starts`` (``games // 2``) is played from both sides: how
    many of them each player won from both (``first_won_both``, ``second_won_both``); the rest
    were split (or drawn). Where one side of nearly every start wins whoever plays it, a rate far
    from half takes starts won from both sides. ``on_step``: as :func:`match_results`', counting
    the games of both halves."""
    half = games // 2
    second_half = None if on_step is None else (lambda finished: on_step(half + finished))
    as_left, left_lengths = match_results(first, second, half, seed, on_step=on_step, **options)
    as_right, right_lengths = match_results(second, first, games - half, seed, on_step=second_half, **options)
    lengths = np.concatenate([left_lengths, right_lengths])
    first_wins = int(np.sum(as_left == LEFT_WINS) + np.sum(as_right == RIGHT_WINS))
    second_wins = int(np.sum(as_left == RIGHT_WINS) + np.sum(as_right == LEFT_WINS))
    paired_left, paired_right = as_left[:half], as_right[:half]  # an odd count's last game has no pair
    return {
        "first_wins": first_wins,
        "second_wins": second_wins,
        "draws": games - first_wins - second_wins,
        "time_outs": int(np.sum(lengths >= time_limit(options))),
        "mean_length": float(lengths.mean()),
        "starts": half,
        "first_won_both": int(np.sum((paired_left == LEFT_WINS) & (paired_right == RIGHT_WINS))),
        "second_won_both": int(np.sum((paired_left == RIGHT_WINS) & (paired_right == LEFT_WINS))),
    }


def registered_options(env_id: str) -> dict[str, Any]:
    """The game options and time limit a BallDuel id registers (``BallSumo-v0``'s rules)."""
    import gymnasium as gym

    import ballenvs  # noqa: F401  (registers the ids)

    spec = gym.spec(env_id)
    options = {key: value for key, value in spec.kwargs.items() if key in DUEL_OPTIONS}
    return {**options, "max_episode_steps": spec.max_episode_steps}


def round_robin(
    players: Sequence[Any],
    games: int = 200,
    seed: int = 0,
    on_pair: Callable[[dict[str, Any], int, int], None] | None = None,
    **options: Any,
) -> list[dict[str, Any]]:
    """Every player against every other (:func:`play_pairs`): the first's wins, draws and losses;
    ``on_pair(row, k, pairs)`` after the k-th of the pairs (progress)."""
    rows = []
    pairs = list(itertools.combinations(players, 2))
    for k, (first, second) in enumerate(pairs, 1):
        pair = play_pairs(first, second, games, seed, **options)
        rows.append(
            {"first": first, "second": second, "wins": pair["first_wins"], "draws": pair["draws"]}
            | {"losses": pair["second_wins"], "time_outs": pair["time_outs"], "mean_length": pair["mean_length"]}
        )
        if on_pair is not None:
            on_pair(rows[-1], k, len(pairs))
    return rows


def round_robin_table(rows: list[dict[str, Any]]) -> str:
    """The rows of :func:`round_robin` as a Markdown table."""
    lines = [
        "| first | second | wins | draws | losses | time-outs | mean length |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        names = (played_as(r["first"]), played_as(r["second"]))  # an alias with the version it played
        cells = (*names, r["wins"], r["draws"], r["losses"], r["time_outs"], f"{r['mean_length']:.0f}")
        lines.append("| " + " | ".join(map(str, cells)) + " |")
    return "\n".join(lines)
