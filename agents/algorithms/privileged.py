"""The game's state beside the frames, for a pixel learner that may read it in training only.

Privileged information, not a teacher (DESIGN.md, principle 18): the env already hands out the
state it draws (``state_info=True`` puts it in ``info["state"]``), and a learner on pixels may
train on it without being told what to play. Our PPO uses it two ways (:mod:`agents.algorithms.ppo`'s
``critic_reads_state`` and ``state_prediction``): its critic reads the state while its actor reads the
frames (Pinto et al., "Asymmetric Actor Critic for Image-Based Robot Learning", 2018), and the
actor's features learn to predict the state beside the policy (Lample and Chaplot, "Playing FPS
Games with Deep Reinforcement Learning", 2017). Our DQN (``--algo custom``, :mod:`agents.algorithms.dqn`)
the second way: its Q-network's features predict the state beside the TD loss. At play time only the
actor (the Q-network) plays: a saved model reads the frames alone.

:class:`StateSteps` hands the training loop both: its observations are ``{"frames": ..., "state":
...}``, the state as ``obs_type="state"`` would show it (the scaled vector the state learners
read), and where an episode ended the state it ended in, as the frames' true next observation.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
import torch
from gymnasium import spaces

from agents.algorithms.teachers import STATE_KEY, STATE_OPTION, arena_of
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import TeacherGame
from agents.common.errors import UsageError

#: The two parts of a privileged learner's training observations.
FRAMES, STATE = "frames", "state"
#: The least spread a state number's prediction error is divided by (one that never moves: the clock at a start).
STATE_SCALE_FLOOR = 1e-3


def spread(states: torch.Tensor) -> torch.Tensor:
    """Each state number's spread over ``states`` (a rollout, a minibatch), floored: what its
    prediction's error is measured in, so that velocities, which vary a tenth as much as
    positions, weigh alike."""
    return states.std(dim=0).clamp_min(STATE_SCALE_FLOOR)


def standardized_error(predicted: torch.Tensor, states: torch.Tensor, scale: torch.Tensor) -> torch.Tensor:
    """The mean squared error of ``predicted`` to ``states``, each number in units of its ``scale``
    (1 for predicting the mean): ``train/state_error``."""
    return ((predicted.float() - states) / scale).square().mean()


def check_state_game(section: Section, keys: str) -> TeacherGame:
    """The run's game, when it reports the state that ``keys`` read; one line otherwise."""
    if section.env_kwargs.get(STATE_OPTION) is not True:
        raise UsageError(f"{keys} read the game's state the env reports; add --env-kwargs {STATE_OPTION}=true")
    game = TeacherGame(section.env_id, dict(section.env_kwargs))
    arena_of(game)  # a game that shows its state, or one line
    return game


def state_size(game: TeacherGame) -> int:
    """How many numbers the state observation of ``game`` holds (what ``obs_type="state"`` shows)."""
    options = {**game.env_kwargs, "opponent": "still", STATE_OPTION: True}
    env = gym.make_vec(f"ballenvs:{game.env_id}", num_envs=1, vectorization_mode="vector_entry_point", **options)
    try:
        _, info = env.reset(seed=0)
    finally:
        env.close()
    return int(arena_of(game).state_observation(info[STATE_KEY], game.env_kwargs).shape[1])


def with_state(frames: spaces.Space, size: int) -> spaces.Dict:
    """The space of a privileged learner's training observations: ``frames`` and a state of ``size`` numbers."""
    return spaces.Dict({FRAMES: frames, STATE: spaces.Box(-np.inf, np.inf, (size,), np.float32)})


class StateSteps:
    """Training envs (:mod:`agents.environments.steps`) whose observations carry the game's state
    beside the frames the learner plays from."""

    def __init__(self, steps: Any, game: TeacherGame) -> None:
        self.steps, self.game, self.arena = steps, game, arena_of(game)
        self.num_envs, self.action_space = steps.num_envs, steps.action_space
        self.observation_space = with_state(steps.observation_space, state_size(game))

    def _state(self, info: dict[str, Any] | None) -> np.ndarray:
        if not info or STATE_KEY not in info:
            raise UsageError(f"the state is read from info[{STATE_KEY!r}]: a native vector env with {STATE_OPTION}=true")
        return self.arena.state_observation(info[STATE_KEY], self.game.env_kwargs)

    def first_observations(self) -> dict[str, np.ndarray]:
        frames = self.steps.first_observations()
        return {FRAMES: frames, STATE: self._state(self.steps.reset_info)}

    @property
    def reset_info(self) -> dict[str, Any]:
        return self.steps.reset_info

    def step(self, actions: np.ndarray) -> Any:
        step = self.steps.step(actions)
        states = self._state(step.info)
        next_states = states
        ended = step.info.get("_final_info") if step.info else None
        if ended is not None and ended.any():  # an ended game's state is its last, not the next game's first
            next_states = states.copy()
            next_states[ended] = self._state(step.info["final_info"])[ended]
        return step._replace(
            observations={FRAMES: step.observations, STATE: states},
            next_observations={FRAMES: step.next_observations, STATE: next_states},
        )

    def get_state(self) -> Any:
        return self.steps.get_state()

    def set_state(self, state: Any) -> None:
        self.steps.set_state(state)

    def close(self) -> None:
        self.steps.close()
