"""Fast gymnasium environments for DQN agents: ``BallDuel-v0`` and ``BallSumo-v0`` (two balls in
a ring, from pixels or the state; also a two-player PettingZoo game), ``UAVGrid-v0`` and
``UAVGridImage-v0`` (a UAV serving ground users, from its two inputs or a map image).

Importing the package registers the ids (idempotently, so re-imports and subprocess
workers see no "overriding environment" warning)::

    import gymnasium as gym
    import ballenvs
    env = gym.make("BallDuel-v0")   # or gym.make("ballenvs:BallDuel-v0") without the import
"""

from typing import Any

from gymnasium.envs.registration import register, registry

from ballenvs.reference import register_reference

#: BallSumo-v0's rules (see ballenvs.duel.two_player_game.TwoPlayerDuel); the PettingZoo faces take them too.
SUMO_RULES: dict[str, Any] = {"floor_slope": 0.6, "time_limit_rule": "nearer_centre", "game_steps": 100}

__version__ = "0.6.0"

#: id -> registration keyword arguments, and where its reference policies are (see
#: ballenvs.reference). ``max_episode_steps`` is the time limit: gymnasium's TimeLimit for
#: ``gym.make``, the vector env's own for ``gym.make_vec``.
_ENV_SPECS: dict[str, dict[str, Any]] = {
    "BallDuel-v0": {
        "entry_point": "ballenvs.duel.env:BallDuelEnv",
        "vector_entry_point": "ballenvs.duel.env:BallDuelVectorEnv",
        "max_episode_steps": 1000,
        # A mean return of 0.8 against the default opponent (chaser): at least 90% of games won.
        "reward_threshold": 0.8,
        "reference": "ballenvs.duel.reference:REFERENCE",
    },
    # The duel as a decisive game, sumo: a domed floor, and the ball nearer the centre wins when
    # the game's clock runs out (game_steps). Every game so ends terminated, with a result; the
    # registered limit lies one step beyond, so that it never truncates one. A name of its own
    # (it was BallDuel-v1): with a v1 registered, gymnasium calls BallDuel-v0 "out of date" on
    # every make, and a test run under -W error::DeprecationWarning fails on the main command's env.
    "BallSumo-v0": {
        "entry_point": "ballenvs.duel.env:BallDuelEnv",
        "vector_entry_point": "ballenvs.duel.env:BallDuelVectorEnv",
        "max_episode_steps": SUMO_RULES["game_steps"] + 1,
        "kwargs": SUMO_RULES,
        "reward_threshold": 0.8,
        "reference": "ballenvs.duel.reference:REFERENCE_SUMO",
    },
    "UAVGrid-v0": {
        "entry_point": "ballenvs.uav.env:UAVGridEnv",
        "vector_entry_point": "ballenvs.uav.env:UAVGridVectorEnv",
        "max_episode_steps": 300,
        # The greedy heuristic's level (21.37 +- 2.93 over episodes 0-19): an agent that serves as well.
        "reward_threshold": 21.0,
        "reference": "ballenvs.uav.reference:REFERENCE",
    },
    # The same env with the map image: its own id, so it can have its own zoo config section.
    "UAVGridImage-v0": {
        "entry_point": "ballenvs.uav.env:UAVGridEnv",
        "vector_entry_point": "ballenvs.uav.env:UAVGridVectorEnv",
        "max_episode_steps": 300,
        "kwargs": {"obs_type": "image"},
        "reward_threshold": 21.0,
        "reference": "ballenvs.uav.reference:REFERENCE",
    },
}
ENV_IDS = tuple(_ENV_SPECS)
#: Ids that were renamed: old -> new (the tools name the new one when given the old).
RENAMED_IDS = {"BallDuel-v1": "BallSumo-v0"}


def _register_all() -> None:
    for env_id, spec in _ENV_SPECS.items():
        kwargs = dict(spec)
        register_reference(env_id, kwargs.pop("reference"))
        if env_id not in registry:
            register(id=env_id, **kwargs)


_register_all()
