"""Play a trained model: mean return, episode length, and for games with a winner wins / draws / losses.

    python -m agents.evaluate RUN_DIR_OR_MODEL [--episodes N] [--render human] [--stochastic] [--opponent NAME_OR_MODEL]

Given a run folder it loads the final model (else the best one, else the interrupted one) and
plays it greedily, as training's final figure does (one meaning of "the win rate": the final
model, greedy; ``--stochastic`` samples as the run explored at its end, a model file names another
model), and rebuilds the env and wrappers from the run's config.yml. Models of every trainer load alike,
from weights only; so do an RL Zoo run folder (``logs/dqn/<env>_<n>``: its ``<env>.zip`` and
``<env>/config.yml``) and, with ``--env``, a bare stable-baselines3 DQN .zip. Episode k is
reset with seed ``--seed + k``.
"""

from __future__ import annotations

import sys
from contextlib import closing
from pathlib import Path
from typing import Any

from agents.artifacts.model_players import arena_of
from agents.artifacts.models import bare_model, find_model, run_folder_candidate, zoo_run
from agents.artifacts.runs import CONFIG_NAME, read_config
from agents.artifacts.video import check_video_path, write_video
from agents.common.configuration.registry import algorithm
from agents.common.errors import UsageError, note
from agents.common.threads import PLAYING_ONLY
from agents.environments.ids import check_env_id
from agents.session.cli import (
    Parser,
    add_device_flags,
    add_progress_flag,
    check_seed,
    describe_device,
    resolve_device,
    run_cli,
)
from agents.session.console import Console, counting_from
from agents.session.evaluation import EvalResult, evaluate
from agents.session.opponents import known
from agents.session.tracking import render_fps
from ballenvs import ENV_IDS
from ballenvs.cli import MAX_GAMES
from ballenvs.reference import reference_for


def model_opponent(path: str, device: str, env_id: str, env_kwargs: dict[str, Any]) -> Any:
    """Another model (a file, or a run folder's final model) as a player of ``env_id``'s game,
    seeing the game as it was trained to (agents.league makes its players the same way)."""
    from agents.twoplayer.ratings import make_entrant_player, model_entrant

    if not Path(path).exists():
        players = ", ".join(reference_for(env_id).players)
        raise UsageError(f"--opponent {path!r}: not a built-in player ({players}), a model file or a run folder")
    return make_entrant_player(model_entrant(path), device, env_id, env_kwargs)


def against_every_builtin(
    model_path: Path,
    device: str,
    env_id: str,
    env_kwargs: dict[str, Any],
    games: int,
    seed: int,
    progress: bool = True,
) -> dict[str, dict[str, Any]]:
    """``--opponent all``: the model against each built-in player of its game, ``games`` games a
    player, half from each side (the model seeing the game as it was trained to), as a table;
    ``progress``: the games played so far shown as they go."""
    from agents.twoplayer.ratings import make_entrant_player, model_entrant

    arena = arena_of(env_id)
    player = make_entrant_player(model_entrant(model_path), device, env_id, env_kwargs)
    print(
        f"{model_path} against every built-in player of {env_id} but the planner: {games} games each, "
        f"half from each side, seed {seed}"
    )
    print("| opponent | wins | draws | losses | time-outs | win rate |\n|---|---:|---:|---:|---:|---:|", flush=True)
    table = {}
    console = Console(games * len(arena.yardstick_players), unit="game", enabled=progress)
    for k, name in enumerate(arena.yardstick_players):
        table[name] = arena.play_pairs(player, name, games, seed, env_kwargs, counting_from(console.update, k * games))
        row = table[name]
        cells = (
            arena.played_as(name),
            row["first_wins"],
            row["draws"],
            row["second_wins"],
            row["time_outs"],
            f"{row['first_wins'] / games:.0%}",
        )
        console.write("| " + " | ".join(map(str, cells)) + " |")
    console.close()
    return table


def locate(path: Path, env_id: str | None) -> tuple[Path, dict[str, Any]]:
    """The model to play and its run's config: one of our runs (a folder or a model file in one), an
    RL Zoo run folder, or, with ``--env``, a bare stable-baselines3 DQN .zip."""
    zoo = zoo_run(path)
    if zoo is not None and not (path / CONFIG_NAME).is_file():
        return zoo
    if path.is_file() and path.suffix == ".zip" and not (run_folder_candidate(path) / CONFIG_NAME).is_file():
        if env_id is None:
            raise UsageError(f"{str(path)!r} has no run folder: say which env it plays with --env ({', '.join(ENV_IDS)})")
        check_env_id(env_id)
        from agents.sb3.sb3_dqn import read_model_file

        plain, _ = read_model_file(path, "cpu")
        return bare_model(path, env_id, plain)
    if env_id is not None:
        raise UsageError("--env is for a bare model file; a run folder says its own env")
    model_path, run_dir = find_model(path)
    config = read_config(run_dir)
    if model_path.suffix != algorithm(config["algo"]).suffix:
        raise UsageError(
            f"model {str(model_path)!r}: a {config['algo']} run's models are {algorithm(config['algo']).suffix} files"
        )
    return model_path, config


def has_display() -> bool:
    from ballenvs.play import has_display

    return has_display()


def main(argv: list[str] | None = None) -> EvalResult | dict[str, dict[str, Any]]:
    parser = Parser(prog="python -m agents.evaluate", description=__doc__.split("\n\n")[0].strip())
    parser.add_argument(
        "path", metavar="RUN_DIR_OR_MODEL", help="a run folder (runs/dqn/BallDuel-v0_1) or a model file in one"
    )
    parser.add_argument("--episodes", type=int, default=10, help="episodes to play")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode")
    parser.add_argument("--render", choices=("human",), default=None, help="show the games in a window (needs a display)")
    plays = parser.add_mutually_exclusive_group()
    plays.add_argument("--deterministic", action="store_true", help="the greedy action every step (the default)")
    plays.add_argument(
        "--stochastic", action="store_true", help="sample as the run explored at its end (its final epsilon), not greedily"
    )
    parser.add_argument(
        "--opponent",
        default=None,
        help="play against this opponent instead of the run's (games with an opponent option): a built-in player's name, "
        "or another model (a model file, a snapshot or a run folder), playing the other side as it was trained to see it; "
        "all: a table against every built-in player but the planner (name it alone), --episodes games each, "
        "half from each side (always greedy)",
    )
    add_device_flags(parser)
    parser.add_argument(
        "--env", default=None, help="for a bare stable-baselines3 .zip without its run folder: the env it plays"
    )
    parser.add_argument(
        "--video", default=None, metavar="FILE", help="record the episodes played, headless: an .mp4 or a .gif file"
    )
    add_progress_flag(parser, "the result is still printed")
    args = parser.parse_args(argv)
    if not 1 <= args.episodes <= MAX_GAMES:
        raise UsageError(f"--episodes must be in 1..{MAX_GAMES:,}, got {args.episodes}")
    if args.opponent is not None and not args.opponent.strip():
        raise UsageError(f"--opponent {args.opponent!r}: name a built-in player, a model file or a run folder, or all")
    check_seed(args.seed)
    video = check_video_path(args.video) if args.video is not None else None
    if video and (args.render or args.opponent == "all"):
        raise UsageError("--video records the episodes played one at a time: not with --render or --opponent all")
    if args.render and not has_display():
        raise UsageError(
            "--render human needs a display to open its window (none found: no DISPLAY, or SDL_VIDEODRIVER=dummy)"
        )
    device, threads = resolve_device(args.device, args.threads, PLAYING_ONLY)
    model_path, config = locate(Path(args.path), args.env)
    model = algorithm(config["algo"]).load(model_path, config, device)
    overrides: dict[str, Any] = {}
    if args.opponent is not None:
        env_id, env_kwargs = config["env_id"], dict(config["hyperparams"].get("env_kwargs") or {})
        if not reference_for(env_id).players:
            raise UsageError(f"--opponent {args.opponent!r}: {env_id} has no opponent to choose")
        if args.opponent == "all":
            return against_every_builtin(
                model_path, device, env_id, env_kwargs, args.episodes, args.seed, not args.no_progress
            )
        builtin = known(reference_for(env_id), args.opponent, "--opponent")
        overrides["opponent"] = args.opponent if builtin else model_opponent(args.opponent, device, env_id, env_kwargs)
    if args.render or video:
        overrides["render_mode"] = args.render or "rgb_array"
    note(f"device: {describe_device(device, threads)}")
    played_how = "sampled as the run explored at its end" if args.stochastic else "greedy"
    print(f"{model_path} ({config['algo']}), {played_how}")  # the results' caption: which model, how it played
    frames: list = []
    with closing(Console(args.episodes, unit="game", enabled=not args.no_progress)) as console:
        played = frames if video else None
        result = evaluate(model, config, args.episodes, args.seed, not args.stochastic, overrides, played, console.update)
    print(result.summary(config["env_id"]))
    if video:
        print(f"wrote {write_video(video, frames, render_fps(config['env_id']))} ({len(frames)} frames)")
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
