"""BallDuel's :class:`ballenvs.reference.Reference`: the built-in players' returns against the
env's opponent, a trained policy's win rate against each of them, and the :class:`DuelArena`
through which the two-player tools (self-play, leagues) play the game."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from ballenvs.backend import NUMPY
from ballenvs.duel.champion import played_as
from ballenvs.duel.heuristics import no_observation
from ballenvs.duel.observe import StateObserver, view_of_state
from ballenvs.duel.physics import LEFT, RIGHT
from ballenvs.duel.roster import BUILTIN_PLAYERS, HELD_OUT_PLAYERS, YARDSTICK_PLAYERS, is_player, make_player
from ballenvs.duel.search import Lookahead
from ballenvs.duel.tournament import play_matches, play_pairs, registered_options
from ballenvs.duel.two_player_game import DUEL_OPTIONS, TwoPlayerDuel
from ballenvs.game import Seat
from ballenvs.reference import Arena, Reference, Yardstick, win_rate_score

BASELINE_GAMES = 100


def duel_options(env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The options of both players' game among an env's options (the opponent, rendering and the
    time limit are the single-player env's own)."""
    return {key: env_kwargs[key] for key in DUEL_OPTIONS if key in env_kwargs}


class DuelArena(Arena):
    """BallDuel's two sides, under an env's options over the rules its id registers."""

    players = BUILTIN_PLAYERS

    @property
    def yardstick_players(self) -> tuple[str, ...]:
        return YARDSTICK_PLAYERS

    @property
    def held_out_players(self) -> tuple[str, ...]:
        return HELD_OUT_PLAYERS

    def knows(self, name: str) -> bool:
        return is_player(name)

    def played_as(self, name: str) -> str:
        return played_as(name)

    def __init__(self, env_id: str) -> None:
        self.env_id = env_id

    @property
    def defaults(self) -> dict[str, Any]:
        return registered_options(self.env_id)

    def options(self, env_kwargs: Mapping[str, Any]) -> dict[str, Any]:
        return duel_options({**self.defaults, **env_kwargs})

    def _duel(self, env_kwargs: Mapping[str, Any]) -> TwoPlayerDuel:
        """One game under these options (its physics, and whether it has a clock)."""
        return TwoPlayerDuel(None, **self.options(env_kwargs))

    def make_player(self, spec: Any, env_kwargs: Mapping[str, Any]) -> Any:
        duel = self._duel(env_kwargs)
        return make_player(spec, duel.physics, duel.rules)

    def observer(self, env_kwargs: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
        duel = self._duel(env_kwargs)
        return duel.observer.observe

    def film(self, first: Any, second: Any, seed: int, env_kwargs: Mapping[str, Any]) -> list[Any]:
        from ballenvs.render import Renderer

        duel = self._duel(env_kwargs)
        players = {LEFT: self.make_player(first, env_kwargs), RIGHT: self.make_player(second, env_kwargs)}
        rngs = [np.random.default_rng(seed)]
        duel.reset(rngs)
        for player in players.values():
            player.reset(None)
        renderer = Renderer("rgb_array", duel.render_spec("BallDuel"))
        limit = {**self.defaults, **env_kwargs}["max_episode_steps"]
        frames = [renderer.render(lambda canvas: duel.draw(canvas, None))]
        try:
            for _ in range(limit):
                _, terminated = duel.play(*(players[side].act(duel.seat(side, rngs, players[side])) for side in (LEFT, RIGHT)))
                frames.append(renderer.render(lambda canvas: duel.draw(canvas, None)))
                if terminated:
                    break
        finally:
            renderer.close()
        return frames

    def learner_seat(self, env: Any) -> Any:
        env = env.unwrapped
        rngs = env.np_random  # the single env's generator, or the vector env's, one a game
        return env.game.duel.seat(LEFT, list(rngs) if isinstance(rngs, tuple) else [rngs])

    def state_seat(self, states: Any, env_kwargs: Mapping[str, Any], rng: np.random.Generator) -> Any:
        view = view_of_state(states)
        return Seat(view, NUMPY, no_observation, [rng] * len(view.own_x))

    def state_observation(self, states: Any, env_kwargs: Mapping[str, Any]) -> Any:
        duel = self._duel(env_kwargs)
        return StateObserver(duel.physics, duel.clock).observe(view_of_state(states), NUMPY)

    def search_exploiter(self, model: Any, env_kwargs: Mapping[str, Any], seed: int) -> Any:
        return Lookahead(model, self.options(env_kwargs), seed=seed)

    def play_pairs(
        self,
        first: Any,
        second: Any,
        games: int,
        seed: int,
        env_kwargs: Mapping[str, Any],
        on_step: Callable[[int], None] | None = None,
    ) -> dict[str, int]:
        limit = {**self.defaults, **env_kwargs}["max_episode_steps"]
        return play_pairs(first, second, games, seed, on_step, max_episode_steps=limit, **self.options(env_kwargs))


def baselines(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, float]:
    """Mean return (+1 a win, -1 a loss) of each built-in player against the env's opponent."""
    options = {**registered_options(env_id), **env_kwargs}
    opponent = options.pop("opponent", "chaser")
    rules = {key: value for key, value in options.items() if key in (*DUEL_OPTIONS, "max_episode_steps")}
    for observation_option in ("obs_type", "obs_size", "subpixel", "shaping"):
        rules.pop(observation_option, None)
    returns = {}
    for player in YARDSTICK_PLAYERS:
        rates = play_matches(player, opponent, BASELINE_GAMES, seed=0, **rules)
        returns[player] = rates["left_wins"] - rates["right_wins"]
    return returns


def reference(env_id: str) -> Reference:
    """BallDuel's reference under the rules ``env_id`` registers."""
    return Reference(
        heuristic="pusher",
        baselines=baselines,
        yardsticks=tuple(
            Yardstick(f"wins vs {name}", {"opponent": name}, win_rate_score("left"), percent=True)
            for name in YARDSTICK_PLAYERS
        ),
        arena=DuelArena(env_id),
    )


REFERENCE = reference("BallDuel-v0")
REFERENCE_SUMO = reference("BallSumo-v0")
