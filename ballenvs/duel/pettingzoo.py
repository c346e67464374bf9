"""BallDuel as a two-player PettingZoo game, both balls played by agents (``pip install
"ballenvs[pettingzoo]"``)::

    from ballenvs.duel import parallel_env
    env = parallel_env(obs_type="state")
    observations, infos = env.reset(seed=0)
    observations, rewards, terminations, truncations, infos = env.step({"left": 3, "right": 3})

Agents ``"left"`` and ``"right"`` each see the game from their own side (the right one's world
mirrored in x, as ``BallDuel-v0``'s opponent sees it), so one policy can play either side, and
act in that frame. Rewards are zero-sum: +1 to the winner, -1 to the loser, 0 on a draw and
while playing, the shaping term (``shaping``) given to one side and taken from the other.
Episodes end for both at once; ``max_cycles`` (PettingZoo's name for the time limit, 1000)
truncates them. The options are BallDuel's, less the opponent: BallSumo-v0's rules are
``parallel_env(**ballenvs.duel.SUMO_RULES)``. The rules are :class:`ballenvs.duel.two_player_game.TwoPlayerDuel`'s,
the same code ``BallDuel-v0`` runs with one side driven by its opponent.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from pettingzoo import ParallelEnv
from pettingzoo.utils.conversions import parallel_to_aec
from pettingzoo.utils.wrappers import BaseWrapper

from ballenvs._checks import check_action, check_int, check_options
from ballenvs.duel.physics import LEFT, RIGHT
from ballenvs.duel.two_player_game import DUEL_OPTIONS, RENDER_FPS, WINNER_NAMES, TwoPlayerDuel
from ballenvs.render import RENDER_MODES, Renderer

AGENTS = ("left", "right")
SIDES = {"left": LEFT, "right": RIGHT}
NAME = "BallDuel (two players)"


class BallDuelParallelEnv(ParallelEnv):
    """Both players of one BallDuel game; see the module docstring."""

    metadata = {"name": "ballduel_v0", "render_modes": list(RENDER_MODES), "render_fps": RENDER_FPS, "is_parallelizable": True}

    def __init__(self, render_mode: str | None = None, max_cycles: int = 1000, **options: Any) -> None:
        if "max_episode_steps" in options:
            raise ValueError(f"max_episode_steps={options['max_episode_steps']!r}: the PettingZoo faces call it max_cycles")
        check_options(NAME, options, ("render_mode", "max_cycles", *DUEL_OPTIONS))
        self.duel = TwoPlayerDuel(None, **options)
        self.max_cycles = check_int("max_cycles", max_cycles, 1)
        self.possible_agents = list(AGENTS)
        self.agents: list[str] = []
        # One space object per agent, so that seeding one agent's space leaves the other's alone.
        self._observation_spaces = {agent: _copy(self.duel.observation_space) for agent in AGENTS}
        self._action_spaces = {agent: spaces.Discrete(int(self.duel.action_space.n)) for agent in AGENTS}
        self.render_mode = render_mode
        self._renderer = Renderer(render_mode, self.duel.render_spec(NAME))
        self._rng: np.random.Generator | None = None

    def observation_space(self, agent: str) -> spaces.Space:
        return self._observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Space:
        return self._action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[dict, dict]:
        """A new game. ``options`` are accepted for PettingZoo's API and ignored: the game has none."""
        if seed is not None or self._rng is None:
            self._rng, _ = seeding.np_random(seed)
        self.duel.reset([self._rng])
        self.agents = list(AGENTS)
        if self.render_mode == "human":
            self.render()
        return self._observations(), {agent: {} for agent in AGENTS}

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise ResetNeeded(f"{NAME}: step() called with no game running; call reset() first")
        if set(actions) != set(self.agents):
            raise ValueError(f"{NAME}: actions must be given for {self.agents}, got {sorted(actions)}")
        left = check_action(actions["left"], int(self._action_spaces["left"].n))
        right = check_action(actions["right"], int(self._action_spaces["right"].n))
        reward, terminated = self.duel.play(left, right)
        truncated = self.duel.steps >= self.max_cycles
        winner = WINNER_NAMES[self.duel.winner]
        rewards = {"left": float(reward), "right": -float(reward)}
        terminations = dict.fromkeys(AGENTS, bool(terminated))
        truncations = dict.fromkeys(AGENTS, bool(truncated))
        infos = {agent: {"winner": winner} for agent in AGENTS}
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return self._observations(), rewards, terminations, truncations, infos

    def _observations(self) -> dict[str, np.ndarray]:
        return {agent: self.duel.observe(side) for agent, side in SIDES.items()}

    def render(self, mode: str | None = None) -> np.ndarray | None:
        """The picture of the game in the env's ``render_mode``; ``mode``: what Ray RLlib's wrapper
        passes (the env's own mode, or None)."""
        if mode is not None and mode != self.render_mode:
            raise ValueError(f"render mode {mode!r}: this env was made with render_mode={self.render_mode!r}")
        return self._renderer.render(lambda canvas: self.duel.draw(canvas, None))

    def close(self) -> None:
        self._renderer.close()


def _copy(space: spaces.Box) -> spaces.Box:
    return spaces.Box(space.low, space.high, space.shape, space.dtype)


def parallel_env(**options: Any) -> BallDuelParallelEnv:
    return BallDuelParallelEnv(**options)


class _CheckedActions(BaseWrapper):
    """The AEC face refuses a bad action when it is given, as the parallel face does: without
    this, parallel_to_aec holds the first agent's action until the second one acts."""

    def step(self, action: Any) -> None:
        agent = self.agent_selection
        if not (self.terminations[agent] or self.truncations[agent]):
            check_action(action, int(self.action_space(agent).n))
        super().step(action)


def env(**options: Any) -> Any:
    """The same game through PettingZoo's AEC API (the agents take turns within a step)."""
    return _CheckedActions(parallel_to_aec(BallDuelParallelEnv(**options)))
