"""A round robin of BallDuel players with Elo ratings: how good is each snapshot, each run, each script?

    python -m agents.league runs/custom/BallDuel-v0_3 runs/dqn/BallDuel-v0_1/final_model.zip chaser pusher
    python -m agents.league PLAYER... [--games 100] [--seed 0] [--log-dir runs/league]

A player is a built-in one (still, random, chaser, pusher), a model file (a final, best or
interrupted model, a checkpoint, a self-play snapshot), or a run folder: all its self-play
snapshots and its final model, each a player of its own. Every pair plays ``--games`` games,
half with each on the left (the games are seeded and both sides see them alike, so the sides
are equal). Each model plays as it was trained to see the game: its own observation type and
frame stack. Elo ratings are fitted to all results (a win scores 1, a draw or a time-out 1/2;
the mean rating is 1000) with a prior of one virtual draw a player, so that a perfect record has a
finite rating, and a standard error from the posterior's curvature that widens with fewer games.
Output in ``<log-dir>/league_<n>/``: ``league.csv`` (players and ratings),
``results.csv`` (every pair), ``report.md`` and ``elo.png`` (each run's snapshots' rating
against their training step; the built-in players as lines).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

from agents.artifacts.model_players import arena_of
from agents.artifacts.runs import check_log_dir, new_run_dir
from agents.artifacts.video import check_video_path, write_video
from agents.common.configuration.config import parse_overrides
from agents.common.errors import UsageError, note
from agents.common.stops import Interrupted, deferring_stops, ignore_stops, signal_of
from agents.common.threads import PLAYING_ONLY
from agents.environments.envs import probe_spaces
from agents.session.cli import (
    Parser,
    add_device_flags,
    add_progress_flag,
    check_two_player_flags,
    describe_device,
    resolve_device,
    run_cli,
)
from agents.session.console import Console
from agents.session.tracking import render_fps
from agents.twoplayer.ratings import (
    elo_errors,
    entrants,
    fit_elo,
    make_entrant_player,
    model_env_id,
    play_league,
    tables,
    write_outputs,
)
from ballenvs.reference import reference_for

DEFAULT_ENV = "BallDuel-v0"


def main(argv: list[str] | None = None) -> Path:
    parser = Parser(prog="python -m agents.league", description=__doc__.split("\n\n")[0].strip())
    parser.add_argument("players", nargs="+", metavar="PLAYER", help="built-in names, model files or run folders")
    parser.add_argument("--games", type=int, default=100, help="games per pair (even: half from each side)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the games")
    add_device_flags(parser)
    parser.add_argument("--log-dir", default="runs", help="where league folders go (<log-dir>/league/league_<n>)")
    parser.add_argument(
        "--env", default=None, help=f"the game: a two-player env id (default: the models' own, else {DEFAULT_ENV})"
    )
    parser.add_argument("--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE", help="the game's options")
    parser.add_argument(
        "--video", default=None, metavar="FILE", help="a game of the two best-rated players, as an .mp4 or a .gif"
    )
    add_progress_flag(parser, "each pair's result is still printed")
    args = parser.parse_args(argv)
    video = check_video_path(args.video) if args.video is not None else None
    check_two_player_flags(args)
    env_kwargs = parse_overrides(args.env_kwargs, "--env-kwargs")
    device, threads = resolve_device(args.device, args.threads, PLAYING_ONLY)
    league = entrants(args.players, reference_for(args.env or DEFAULT_ENV).players)
    env_id = args.env or _models_env(league)
    arena = reference_for(env_id).arena  # a built-in alias is reported with the version it plays: champion (champion-v3)
    if arena is not None:
        league = [
            replace(entrant, name=arena.played_as(entrant.name)) if isinstance(entrant.spec, str) else entrant
            for entrant in league
        ]
    probe_spaces(env_id, env_kwargs, None)  # bad game options: one line, before any player is built
    if not args.log_dir.strip():
        raise UsageError("--log-dir '': name a folder (the default is runs)")
    players = [make_entrant_player(entrant, device, env_id, env_kwargs) for entrant in league]
    check_log_dir(args.log_dir, "league")  # before any game: a folder it cannot write in is refused first
    pairs = len(league) * (len(league) - 1) // 2
    note(f"{env_id}: {len(league)} players, {pairs} pairs of {args.games} games on {describe_device(device, threads)}")
    results = np.zeros((len(league), len(league), 3), dtype=np.int64)
    console = Console(pairs * args.games, unit="game", enabled=not args.no_progress)

    def played_pair(i: int, j: int, count: int) -> None:
        wins, draws, losses = results[i, j]
        console.write(
            f"  pair {count}/{pairs}: {league[i].name} against {league[j].name}: {wins} wins, {draws} draws, {losses} losses"
        )

    try:
        play_league(players, args.games, args.seed, env_id, env_kwargs, results, played_pair, console.update)
    except KeyboardInterrupt as stop:  # Ctrl-C or a stop signal: the pairs played so far are kept
        console.close()
        ignore_stops()
        played = int(np.count_nonzero(results.sum(axis=2)))
        folder, _ = write(args, league, results, env_id)
        raise Interrupted(f"the {played} of {pairs} pairs played so far are rated in {folder}", signal_of(stop)) from None
    console.close()
    with deferring_stops() as stopped:  # a stop now waits for the files, then says where they are
        folder, ratings = write(args, league, results, env_id)
    if stopped.signum is not None:
        raise Interrupted(f"all {pairs} pairs were played and are rated in {folder}", stopped.signum)
    print(f"wrote {folder / 'league.csv'}, {folder / 'results.csv'}, {folder / 'report.md'}, {folder / 'elo.png'}")
    if video:
        best, second = np.argsort(-ratings)[:2]
        frames = arena_of(env_id).film(players[best], players[second], args.seed, env_kwargs)
        print(
            f"wrote {write_video(video, frames, render_fps(env_id))}: {league[best].name} (left) against {league[second].name}"
        )
    return folder


def write(args: argparse.Namespace, league: list, results: np.ndarray, env_id: str) -> tuple[Path, np.ndarray]:
    """A new league folder with the ratings fitted to ``results``; the folder and the ratings."""
    scores, games = tables(results)
    ratings = fit_elo(scores, games)
    errors = elo_errors(scores, games, ratings)
    folder = new_run_dir(args.log_dir, "league", "league")
    print(write_outputs(folder, league, results, ratings, errors, env_id))
    return folder, ratings


def _models_env(league: list) -> str:
    """The game the models were trained on; models of several games need ``--env``."""
    env_ids = sorted({env_id for entrant in league if (env_id := model_env_id(entrant)) is not None})
    if len(env_ids) > 1:
        raise UsageError(f"the models were trained on different games ({', '.join(env_ids)}): say which to play with --env")
    return env_ids[0] if env_ids else DEFAULT_ENV


if __name__ == "__main__":
    sys.exit(run_cli(main))
