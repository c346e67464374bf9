"""Play any ballenvs game yourself: ``python -m ballenvs.play [--env BallSumo-v0] [--opponent pusher]``.

Steer with the arrow keys (two at once for diagonals): in BallDuel and BallSumo you are the blue
(left) ball, in UAVGrid the UAV. Esc or closing the window quits. ``--opponent`` is a built-in
player, or a run folder or model file of the agents you trained (loaded by ``agents.load_player``,
which needs the ``agents`` extra; ``ballenvs`` itself never imports torch). Every env also plays
with gymnasium's own ``gymnasium.utils.play.play(gym.make(id, render_mode="rgb_array"))``.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

import ballenvs
from ballenvs.backend import SCALAR
from ballenvs.cli import MAX_SEED, CommandError, Parser, bounded, run
from ballenvs.directions import heading_to_action
from ballenvs.duel.roster import BUILTIN_PLAYERS, is_player
from ballenvs.reference import reference_for
from ballenvs.render import import_pygame

#: What the person presses each step: (up, down, left, right, quit).
Keys = Callable[[], tuple[bool, bool, bool, bool, bool]]


def has_display() -> bool:
    if os.environ.get("SDL_VIDEODRIVER") in ("dummy", "offscreen"):
        return False
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def keys_to_action(up: bool, down: bool, left: bool, right: bool) -> int:
    """The action for the arrow keys held down (opposite keys cancel)."""
    return heading_to_action(SCALAR, float(right) - float(left), float(up) - float(down))


def keyboard() -> Keys:
    """The arrow keys held down and whether the person quit (Esc, or the window closed)."""
    pygame = import_pygame()

    def pressed() -> tuple[bool, bool, bool, bool, bool]:
        quit_asked = any(
            event.type == pygame.QUIT or (event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE)
            for event in pygame.event.get()
        )
        keys = pygame.key.get_pressed()
        return keys[pygame.K_UP], keys[pygame.K_DOWN], keys[pygame.K_LEFT], keys[pygame.K_RIGHT], quit_asked

    return pressed


def opponent_of(spec: str) -> Any:
    """``--opponent``: a built-in player's name as it is, or a run folder or model file as the player
    its model is (``agents.load_player``, imported only now: the agents extra is optional)."""
    if is_player(spec):
        return spec
    if not Path(spec).exists():
        raise CommandError(
            f"--opponent {spec!r}: not a built-in player ({', '.join(BUILTIN_PLAYERS)}), a run folder or a model file"
        )
    try:
        agents = importlib.import_module("agents")  # the agents package, by name: ballenvs does not depend on it
    except ImportError:
        raise CommandError(
            "--opponent RUN plays a trained model, which needs the agents extra: pip install 'ballenvs[agents]'"
        ) from None
    if not hasattr(agents, "load_player"):
        raise CommandError(f"--opponent RUN: the 'agents' package installed ({agents.__file__}) is not ballenvs's")
    return agents.load_player(spec)


def play(env: gym.Env, keys: Keys, two_players: bool, seed: int | None = None) -> tuple[int, int, int]:
    """Games until the person quits: (wins, losses, draws) of the left ball, each game's end said."""
    env.reset(seed=seed)
    wins = losses = draws = 0
    episode_return = 0.0
    while True:
        up, down, left, right, quit_asked = keys()
        if quit_asked:
            print(f"you won {wins}, lost {losses}, drew {draws}")
            return wins, losses, draws
        _, reward, terminated, truncated, info = env.step(keys_to_action(up, down, left, right))
        episode_return += float(reward)
        if (terminated or truncated) and not two_players:
            print(f"episode return {episode_return:.2f}")
            episode_return = 0.0
            env.reset()
        elif terminated or truncated:
            winner = info["winner"]
            wins += winner == "left"
            losses += winner == "right"
            draws += winner in ("draw", None)
            print(f"winner: {winner or 'nobody (time up)'}")
            env.reset()


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="python -m ballenvs.play", description="Play a ballenvs game with the arrow keys.")
    parser.add_argument("--env", choices=ballenvs.ENV_IDS, default="BallDuel-v0", help="the game (default: BallDuel-v0)")
    parser.add_argument(
        "--opponent",
        default=None,
        help="BallDuel and BallSumo: who plays the right ball: a built-in player (default: chaser), or a run folder or "
        "model file of an agent you trained",
    )
    parser.add_argument("--seed", type=bounded(0, MAX_SEED), default=None)
    args = parser.parse_args(argv)
    two_players = bool(reference_for(args.env).players)
    if args.opponent is not None and not args.opponent.strip():
        parser.error(f"--opponent {args.opponent!r}: name a built-in player, a run folder or a model file")
    if args.opponent and not two_players:
        parser.error(f"--opponent: {args.env} has no opponent")
    options: dict[str, Any] = {"opponent": opponent_of(args.opponent or "chaser")} if two_players else {}
    if not has_display():
        raise CommandError("ballenvs.play needs a window: no display (no DISPLAY, or SDL_VIDEODRIVER=dummy)")
    env = gym.make(args.env, render_mode="human", **options)
    try:
        play(env, keyboard(), two_players, args.seed)
    finally:
        env.close()
    return 0


if __name__ == "__main__":
    sys.exit(run(main))
