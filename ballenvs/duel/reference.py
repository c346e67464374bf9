"""BallDuel's :class:`ballenvs.reference.Reference`: the built-in players' returns against the
env's opponent, a trained policy's win rate against each of them, and the :class:`DuelArena`
through which the two-player tools (self-play, leagues) play the game."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ballenvs.duel.game import DUEL_OPTIONS, TwoPlayerDuel
from ballenvs.duel.match import play_matches, play_pairs
from ballenvs.duel.observe import make_observer
from ballenvs.duel.players import BUILTIN_PLAYERS, make_player
from ballenvs.reference import Arena, Reference, Yardstick, win_rate_score

BASELINE_GAMES = 100
#: The registered time limit; a run's ``max_episode_steps`` option overrides it.
DEFAULT_GAME_STEPS = 1000


def duel_options(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The options of both players' game among an env's options (the opponent, rendering and the
    time limit are the single-player env's own)."""
    return {key: env_kwargs[key] for key in DUEL_OPTIONS if key in env_kwargs}


class DuelArena(Arena):
    """BallDuel's two sides, under an env's options (``defaults``: those its id registers)."""

    players = BUILTIN_PLAYERS

    def __init__(self, defaults: Mapping[str, Any] | None = None) -> None:
        self.defaults = dict(defaults or {})

    def options(self, env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return duel_options({**self.defaults, **env_kwargs})

    def _physics(self, env_kwargs: Mapping[str, Any]) -> Any:
        sizes = {key: value for key, value in self.options(env_kwargs).items() if key in ("ring_radius", "ball_radius")}
        return TwoPlayerDuel(None, **sizes).physics

    def make_player(self, spec: Any, env_kwargs: Mapping[str, Any]) -> Any:
        return make_player(spec, self._physics(env_kwargs))

    def observer(self, env_kwargs: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
        options = self.options(env_kwargs)
        observer, _ = make_observer(self._physics(env_kwargs), options.get("obs_type", "pixels"), options.get("obs_size", 64))
        return observer.observe

    def play_pairs(self, first: Any, second: Any, games: int, seed: int, env_kwargs: Mapping[str, Any]) -> dict[str, int]:
        limit = {**self.defaults, **env_kwargs}.get("max_episode_steps", DEFAULT_GAME_STEPS)
        return play_pairs(first, second, games, seed, max_episode_steps=limit, **self.options(env_kwargs))


def baselines(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, float]:
    """Mean return (+1 a win, -1 a loss) of each built-in player against the env's opponent."""
    import gymnasium as gym

    limit = env_kwargs.get("max_episode_steps", gym.spec(env_id).max_episode_steps)
    sizes = {key: env_kwargs[key] for key in ("ring_radius", "ball_radius") if key in env_kwargs}
    opponent = env_kwargs.get("opponent", "chaser")
    returns = {}
    for player in BUILTIN_PLAYERS:
        rates = play_matches(player, opponent, BASELINE_GAMES, seed=0, max_episode_steps=limit, **sizes)
        returns[player] = rates["left_wins"] - rates["right_wins"]
    return returns


REFERENCE = Reference(
    heuristic="pusher",
    baselines=baselines,
    yardsticks=tuple(
        Yardstick(f"wins vs {name}", {"opponent": name}, win_rate_score("left"), percent=True) for name in BUILTIN_PLAYERS
    ),
    arena=DuelArena(),
)
