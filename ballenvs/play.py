"""Play any ballenvs game yourself: ``python -m ballenvs.play [--env BallSumo-v0] [--opponent pusher]``.

Steer with the arrow keys (two at once for diagonals): in BallDuel you are the blue (left)
ball, in UAVGrid the UAV. Esc or closing the window quits. Every env also plays with
gymnasium's own ``gymnasium.utils.play.play(gym.make(id, render_mode="rgb_array"))``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import gymnasium as gym

import ballenvs
from ballenvs.backend import SCALAR
from ballenvs.cli import MAX_SEED, CommandError, Parser, bounded, run
from ballenvs.directions import heading_to_action
from ballenvs.duel.roster import BUILTIN_PLAYERS
from ballenvs.render import import_pygame


def has_display() -> bool:
    if os.environ.get("SDL_VIDEODRIVER") in ("dummy", "offscreen"):
        return False
    if sys.platform.startswith("linux"):
        return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))
    return True


def keys_to_action(up: bool, down: bool, left: bool, right: bool) -> int:
    """The action for the arrow keys held down (opposite keys cancel)."""
    return heading_to_action(SCALAR, float(right) - float(left), float(up) - float(down))


def main(argv: list[str] | None = None) -> int:
    parser = Parser(prog="python -m ballenvs.play", description="Play a ballenvs game with the arrow keys.")
    parser.add_argument("--env", choices=ballenvs.ENV_IDS, default="BallDuel-v0", help="the game (default: BallDuel-v0)")
    parser.add_argument(
        "--opponent", choices=BUILTIN_PLAYERS, default=None, help="BallDuel: who plays the right ball (default: chaser)"
    )
    parser.add_argument("--seed", type=bounded(0, MAX_SEED), default=None)
    args = parser.parse_args(argv)
    duel = args.env.startswith("BallDuel")
    if args.opponent and not duel:
        parser.error(f"--opponent: {args.env} has no opponent")
    if not has_display():
        raise CommandError("ballenvs.play needs a window: no display (no DISPLAY, or SDL_VIDEODRIVER=dummy)")
    pygame = import_pygame()
    options: dict[str, Any] = {"opponent": args.opponent or "chaser"} if duel else {}
    env = gym.make(args.env, render_mode="human", **options)
    env.reset(seed=args.seed)
    wins = losses = draws = 0
    episode_return = 0.0
    try:
        while True:
            for event in pygame.event.get():
                if event.type == pygame.QUIT or (event.type == pygame.KEYDOWN and event.key == pygame.K_ESCAPE):
                    print(f"you won {wins}, lost {losses}, drew {draws}")
                    return 0
            keys = pygame.key.get_pressed()
            action = keys_to_action(keys[pygame.K_UP], keys[pygame.K_DOWN], keys[pygame.K_LEFT], keys[pygame.K_RIGHT])
            _, reward, terminated, truncated, info = env.step(action)
            episode_return += float(reward)
            if (terminated or truncated) and not duel:
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
    finally:
        env.close()


if __name__ == "__main__":
    sys.exit(run(main))
