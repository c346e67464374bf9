"""The duel's self-play on RLlib's multi-agent API, with a pool like ours (:mod:`agents.twoplayer.selfplay`).

:class:`DuelPool` is one game of a two-player env id. At every reset it draws who plays the right
ball: with ``scripted_share`` one of the built-in players (played inside the env, as BallDuel-v0's
``opponent`` option plays it: only the learner acts), else with ``p_latest`` the learner itself
(both balls learn), else one of ``window`` frozen snapshots of it. The right ball's agent id names
its module (``"right/snapshot_3"``), so :func:`module_of` maps agents to modules without state, on
every env runner alike; the learner (:class:`agents.trainer.rllib.RLlibLearner`) refreshes a
snapshot slot every ``snapshot_steps``. The left agent's last info names the opponent and the
winner, which :mod:`agents.rllib.metrics` turns into win rates.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import numpy as np
from ray.rllib.env.multi_agent_env import MultiAgentEnv
from ray.tune.registry import register_env

from agents.common.configuration.hyperparameters import SelfPlay
from agents.rllib import LEARNER
from ballenvs.duel.pettingzoo import BallDuelParallelEnv
from ballenvs.duel.physics import RIGHT
from ballenvs.duel.reference import DuelArena
from ballenvs.game import Player
from ballenvs.reference import reference_for

#: The frozen snapshots' module ids (``window`` of them; the learner's is agents.rllib.LEARNER).
SNAPSHOT = "snapshot_{}"
#: The name RLlib's env runners make the self-play env by (registered by :func:`register`).
SELF_PLAY_ENV = "ballenvs-self-play"
LEFT_AGENT, RIGHT_AGENT = "left", "right/{}"


def snapshot_ids(window: int) -> list[str]:
    return [SNAPSHOT.format(k) for k in range(window)]


def module_of(agent_id: str, episode: Any = None, **kwargs: Any) -> str:
    """The module that plays an agent: the learner on the left, the one its id names on the right."""
    return LEARNER if agent_id == LEFT_AGENT else agent_id.split("/", 1)[1]


class DuelPool(MultiAgentEnv):
    """One game of ``env_id`` (its registered rules under ``env_kwargs``) against the pool; see the module docstring.

    ``config``: ``env_id``, ``env_kwargs`` and ``self_play`` (the section's)."""

    def __init__(self, config: Mapping[str, Any]) -> None:
        super().__init__()
        env_id, env_kwargs = config["env_id"], dict(config.get("env_kwargs") or {})
        self.pool = SelfPlay.from_config(config.get("self_play"))
        arena = reference_for(env_id).arena
        if not isinstance(arena, DuelArena):  # the two-player games are the duels: their PettingZoo face plays both balls
            raise ValueError(f"{env_id} is not a two-player duel; RLlib's self-play plays the duels")
        self.game = BallDuelParallelEnv(
            max_cycles=int(gym.spec(env_id).max_episode_steps or 1000), **arena.options(env_kwargs)
        )
        self.builtins: dict[str, Player] = {name: arena.make_player(name, env_kwargs) for name in self.pool.scripted_players}
        self.snapshots = snapshot_ids(self.pool.window)
        self.possible_agents = [LEFT_AGENT, *(RIGHT_AGENT.format(m) for m in [LEARNER, *self.snapshots])]
        space, actions = self.game.observation_space("left"), self.game.action_space("left")
        self.observation_spaces = dict.fromkeys(self.possible_agents, space)
        self.action_spaces = dict.fromkeys(self.possible_agents, actions)
        # RLlib's EnvContext carries which runner and which of its envs this is: each its own draws.
        seed = 1_000_003 * int(getattr(config, "worker_index", 0)) + int(getattr(config, "vector_index", 0))
        self.rng = np.random.default_rng(seed)
        self.opponent = ""
        self.agents: list[str] = []

    def draw_opponent(self) -> str:
        """A built-in player's name, the learner's module or a snapshot's, as the pool's shares say."""
        pool, rng = self.pool, self.rng
        if self.builtins and rng.random() < pool.scripted_share:
            return str(rng.choice(list(self.builtins)))
        if rng.random() < pool.p_latest:
            return LEARNER
        return str(rng.choice(self.snapshots))

    def reset(self, *, seed: int | None = None, options: dict | None = None) -> tuple[dict, dict]:
        if seed is not None:
            self.rng = np.random.default_rng(seed)
        self.opponent = self.draw_opponent()
        views, _ = self.game.reset(seed=int(self.rng.integers(2**31)))
        if self.opponent in self.builtins:
            self.builtins[self.opponent].reset(None)
            self.agents = [LEFT_AGENT]
        else:
            self.agents = [LEFT_AGENT, RIGHT_AGENT.format(self.opponent)]
        return self._views(views), {agent: {} for agent in self.agents}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        builtin = self.builtins.get(self.opponent)
        if builtin is not None:
            right = builtin.act(self.game.duel.seat(RIGHT, [self.rng], builtin))
        else:
            right = actions[RIGHT_AGENT.format(self.opponent)]
        views, rewards, terminations, truncations, infos = self.game.step({"left": actions[LEFT_AGENT], "right": right})
        over = bool(terminations["left"] or truncations["left"])
        winner = infos["left"]["winner"]
        if over and builtin is not None and type(builtin).finished is not Player.finished:  # players that keep a tally
            builtin.finished(None, {"right": 1.0, "left": -1.0}.get(winner, 0.0))
        sides = {LEFT_AGENT: "left"} | {agent: "right" for agent in self.agents[1:]}
        info: dict[str, dict[str, Any]] = {agent: {} for agent in self.agents}
        info[LEFT_AGENT] = {"winner": winner, "opponent": self.opponent}
        result = (
            self._views(views),
            {agent: rewards[side] for agent, side in sides.items()},
            {agent: terminations[side] for agent, side in sides.items()} | {"__all__": over and terminations["left"]},
            {agent: truncations[side] for agent, side in sides.items()} | {"__all__": over and truncations["left"]},
            info,
        )
        if over:
            self.agents = []
        return result

    def _views(self, views: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        return {agent: views["left" if agent == LEFT_AGENT else "right"] for agent in self.agents}

    def close(self) -> None:
        self.game.close()


def register() -> None:
    """Name :class:`DuelPool` for RLlib's env runners (the registry travels to a cluster's machines)."""
    register_env(SELF_PLAY_ENV, DuelPool)
