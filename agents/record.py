"""Record games as a Minari dataset: any player against a built-in opponent, for offline RL.

    python -m agents.record PLAYER [--env BallSumo-v0] [--opponent chaser] [--episodes 100] [--seed 0]
                            [--env-kwargs obs_type=state] [--dataset-id ballenvs/sumo-PLAYER-v0] [--data-path datasets]

PLAYER is a built-in player (planner, pusher, ...), a model file or a run folder (its final model).
Episode k is seeded ``--seed + k``. The dataset holds the env's spec, so
``minari.load_dataset(ID).recover_environment()`` makes the same env; ``MINARI_DATASETS_PATH``
pointed at ``--data-path`` (or ``agents.studies.datasets.load_dataset``) finds it.
"""

from __future__ import annotations

import sys
import time
from contextlib import closing
from pathlib import Path
from typing import Any

from agents.artifacts.runs import read_config
from agents.common.configuration.config import parse_overrides
from agents.common.errors import UsageError
from agents.common.threads import PLAYING_ONLY
from agents.environments.envs import probe_spaces
from agents.environments.ids import check_two_player_env
from agents.session.cli import (
    MAX_SEED,
    Parser,
    add_device_flags,
    add_progress_flag,
    check_seed,
    resolve_device,
    run_cli,
)
from agents.session.console import Console
from agents.studies.datasets import check_data_path, check_dataset_id, record_games, refuse_existing, write_dataset
from agents.twoplayer.ratings import entrants_of, make_entrant_player
from ballenvs.cli import MAX_GAMES
from ballenvs.reference import reference_for

DEFAULT_ENV = "BallSumo-v0"
DEFAULT_OPPONENT = "chaser"
MAX_EPISODES = MAX_GAMES


def main(argv: list[str] | None = None) -> Path:
    parser = Parser(prog="python -m agents.record", description=__doc__.split("\n\n")[0].strip())
    parser.add_argument("player", metavar="PLAYER", help="a built-in player, a model file or a run folder: the recorded side")
    parser.add_argument("--env", default=DEFAULT_ENV, help=f"a two-player env id (default: {DEFAULT_ENV})")
    parser.add_argument(
        "--opponent",
        default=None,
        help=f"the other side: a built-in player (default: {DEFAULT_OPPONENT}, or --env-kwargs' opponent)",
    )
    parser.add_argument("--episodes", type=int, default=100, help="games to record (default: 100)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first game; game k gets seed + k")
    parser.add_argument(
        "--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE", help="the env's options, e.g. obs_type=state"
    )
    parser.add_argument(
        "--dataset-id", default=None, help="Minari's namespace/name-v<version> (default: ballenvs/<env>-<player>-v0)"
    )
    parser.add_argument("--data-path", default="datasets", help="the folder datasets go in (default: datasets)")
    add_device_flags(parser)
    add_progress_flag(parser, "the dataset written is still printed")
    args = parser.parse_args(argv)

    check_two_player_env(args.env)
    if not 1 <= args.episodes <= MAX_EPISODES:
        raise UsageError(f"--episodes must be in 1..{MAX_EPISODES:,}, got {args.episodes}")
    check_seed(args.seed, high=MAX_SEED - args.episodes + 1)  # every game's seed a valid one
    builtins = reference_for(args.env).players
    env_kwargs: dict[str, Any] = parse_overrides(args.env_kwargs, "--env-kwargs")
    if args.opponent is not None and env_kwargs.get("opponent", args.opponent) != args.opponent:
        raise UsageError(
            f"--opponent {args.opponent!r} and --env-kwargs opponent={env_kwargs['opponent']!r} disagree: give one of them"
        )
    opponent = env_kwargs["opponent"] = (
        args.opponent if args.opponent is not None else env_kwargs.get("opponent", DEFAULT_OPPONENT)
    )
    if opponent not in builtins:
        named_by = "--opponent" if args.opponent is not None else "--env-kwargs opponent"
        raise UsageError(
            f"{named_by} {opponent!r}: the dataset's env spec must rebuild its opponent, so a built-in player: "
            f"{', '.join(builtins)}"
        )
    probe_spaces(args.env, env_kwargs, None)  # bad options: one line, before anything is built
    dataset_id = check_dataset_id(_default_id(args.env, args.player) if args.dataset_id is None else args.dataset_id)
    if not args.data_path.strip():
        raise UsageError(f"--data-path {args.data_path!r}: name the folder datasets go in (default: datasets)")
    data_path = Path(args.data_path)
    check_data_path(data_path)
    refuse_existing(data_path, dataset_id)
    player = _make_player(args.player, args.env, env_kwargs, resolve_device(args.device, args.threads, PLAYING_ONLY)[0])

    start = time.perf_counter()
    with closing(Console(args.episodes, unit="game", enabled=not args.no_progress)) as console:
        buffers = record_games(player, args.env, env_kwargs, args.episodes, args.seed, console.update)
    folder = write_dataset(
        data_path,
        dataset_id,
        buffers,
        args.env,
        env_kwargs,
        algorithm_name=args.player,
        description=f"{args.episodes} games of {args.player} (the learner's side) against {opponent} on {args.env}, "
        f"seeds {args.seed}..{args.seed + args.episodes - 1}, recorded by python -m agents.record",
    )
    steps = sum(len(b.actions) for b in buffers)
    size = sum(f.stat().st_size for f in folder.rglob("*") if f.is_file())
    seconds = time.perf_counter() - start
    print(f"wrote {folder}: {args.episodes} episodes, {steps} steps, {size / 2**20:.1f} MiB in {seconds:.1f} s")
    return folder


def _default_id(env_id: str, player: str) -> str:
    name = Path(player).name if Path(player).exists() else player
    clean = "".join(c if c.isalnum() or c in "_.-" else "_" for c in f"{env_id.split('-')[0].lower()}-{name}")
    return f"ballenvs/{clean}-v0"


def _make_player(spec: str, env_id: str, env_kwargs: dict[str, Any], device: str) -> Any:
    (entrant, *more) = entrants_of(spec, reference_for(env_id).players)
    if more:  # a run folder with snapshots names each of them: record its final model (else its latest snapshot)
        entrant = more[-1]
    if not isinstance(entrant.spec, str):  # a model: its games are recorded in the game it learned
        trained_on = read_config(entrant.spec[1])["env_id"]
        if trained_on != env_id:
            raise UsageError(
                f"player {entrant.name}: a model of {trained_on}, not {env_id}: record it with --env {trained_on}"
            )
    return make_entrant_player(entrant, device, env_id, env_kwargs)


if __name__ == "__main__":
    sys.exit(run_cli(main))
