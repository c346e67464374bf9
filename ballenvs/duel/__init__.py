"""BallDuel: two balls in a ring, pixel or state observations, replaceable opponent.

``parallel_env(**options)`` and ``env(**options)`` give the two-player game through PettingZoo's
parallel and AEC APIs (the optional ``pettingzoo`` extra; imported only when called).
"""

from collections.abc import Callable
from typing import Any

from ballenvs import SUMO_RULES
from ballenvs.duel.env import BallDuelEnv
from ballenvs.duel.roster import BUILTIN_PLAYERS


def _pettingzoo() -> Any:
    try:
        from ballenvs.duel import pettingzoo
    except ModuleNotFoundError as error:
        if error.name != "pettingzoo":
            raise
        raise ImportError("BallDuel's two-player env needs PettingZoo: pip install 'ballenvs[pettingzoo]'") from None
    return pettingzoo


def parallel_env(**options: Any) -> Any:
    """BallDuel with both balls played by agents "left" and "right", as a PettingZoo ParallelEnv."""
    return _pettingzoo().parallel_env(**options)


def env(**options: Any) -> Any:
    """The two-player BallDuel as a PettingZoo AEC env."""
    return _pettingzoo().env(**options)


def policy(player: Any, seed: int = 0, **options: Any) -> Callable[[Any], Any]:
    """A built-in player (a name: ``champion-v3``, ``pusher``, ...) or a trained one
    (``agents.load_player(RUN)``: it sees the game as it was trained, pixels too) as ``policy(obs) -> action`` on the
    state observations the two-player faces give a side (``obs_type="state"``, each side's mirrored to
    its own frame): one observation to one action, or a batch (N, d) to (N,) actions. ``options``: the
    game's, as the face was made with (``**ballenvs.SUMO_RULES`` for BallSumo-v0). So a built-in drives
    either seat of :func:`parallel_env` as a learned model does::

        game = ballsumo_v0.parallel_env(obs_type="state")
        champion = ballenvs.duel.policy("champion-v3", **ballenvs.SUMO_RULES)
        obs, _ = game.reset(seed=0)
        actions = {"left": my_model.predict(obs["left"])[0], "right": champion(obs["right"])}

    A player that keeps plans or frames (the planner, a model of stacked frames) keeps them from call
    to call, and on a face that shows no clock (BallDuel-v0's) the game's time is counted by the
    calls: make one policy for each game (or batch of games; a batch of another size starts anew)."""
    return _state_policy(player, seed, options)


def _state_policy(player: Any, seed: int, options: dict[str, Any]) -> Callable[[Any], Any]:
    import numpy as np

    from ballenvs.duel.observe import StateObserver
    from ballenvs.duel.reference import DuelArena
    from ballenvs.duel.two_player_game import TwoPlayerDuel

    duel = TwoPlayerDuel(None, obs_type="state", **options)
    observer = StateObserver(duel.physics, duel.clock)
    arena, rng = DuelArena("BallDuel-v0"), np.random.default_rng(seed)
    acting = arena.make_player(player, options)

    games, steps = [0], [0]  # how many the last call played (another number is other games), and its step

    def act(observation: Any) -> Any:
        states = observer.states_of(observation)  # the game the observation shows, as the player reads it
        if len(states) != games[0]:
            acting.reset(None)
            games[0], steps[0] = len(states), 0
        if not duel.clock:  # a face that shows no clock: the game's time counted by this policy's calls
            left = max(1.0 - steps[0] / duel.game_steps, 0.0)
            states = np.concatenate([states, np.full((len(states), 1), left)], axis=1)
        steps[0] += 1
        actions = np.asarray(acting.act(arena.state_seat(states, options, rng)))
        return int(actions[0]) if np.ndim(observation) == 1 else actions

    return act


__all__ = ["BallDuelEnv", "BUILTIN_PLAYERS", "SUMO_RULES", "parallel_env", "env", "policy"]
