"""Frame stacking without stable-baselines3's wrappers: the observations its ``VecFrameStack`` (then
``VecTransposeImage`` for images) give a model, bit for bit, over whole batches of games at once.

Used by our collector over the native vector envs (:class:`agents.environments.steps.StackedSteps`) and by
the Q-network players (:mod:`agents.artifacts.model_players`); tests/agents/environments/test_vec_env.py holds it to
``VecFrameStack`` over whole episodes, resets included.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from gymnasium import spaces
from stable_baselines3.common.preprocessing import is_image_space
from stable_baselines3.common.vec_env import VecTransposeImage
from stable_baselines3.common.vec_env.stacked_observations import StackedObservations

from ballenvs.state import copied, fitting_or_none, parts


def stacked_space(space: spaces.Box, k: int) -> spaces.Box:
    """The space of ``k`` stacked observations of ``space``, as the model sees them (channel-first
    for images): the space SB3's wrappers declare."""
    stacked = StackedObservations(1, k, space).stacked_observation_space
    assert isinstance(stacked, spaces.Box)  # a Box stacks to a Box
    return VecTransposeImage.transpose_space(stacked) if is_image_space(stacked) else stacked


class FrameStack:
    """The last ``k`` observations of each of N games: stacked along the channels, oldest first,
    channel-first for images, zeros before a game's first observation."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.stack: np.ndarray | None = None

    def reset(self, games: np.ndarray | None) -> None:
        """Clear the stacks of ``games`` (a mask), whose next observation starts a game; None: all,
        for a new batch, perhaps of another size."""
        if games is None:
            self.stack = None
        elif self.stack is not None:
            self.stack[games] = 0

    def push(self, observations: np.ndarray) -> np.ndarray:
        """Add each game's newest observation; returns the stacks as the model sees them."""
        if self.k == 1:
            return observations
        channels = observations.shape[-1]
        if self.stack is None:
            self.stack = np.zeros((*observations.shape[:-1], channels * self.k), dtype=observations.dtype)
        # A new array each step (np.roll copies): what an earlier push returned stays as it was.
        self.stack = np.roll(self.stack, -channels, axis=-1)
        self.stack[..., -channels:] = observations
        return self.view()

    def restart(self, games: np.ndarray, observations: np.ndarray) -> np.ndarray:
        """The stacks of ``games`` (a mask) begin again from their row of ``observations``, each
        a game's first: what the model sees after an automatic reset."""
        if self.k == 1:
            return observations
        channels = observations.shape[-1]
        assert self.stack is not None, "restart() follows a push()"
        self.stack = self.stack.copy()  # the last push's result is kept as it was
        self.stack[games] = 0
        self.stack[games, ..., -channels:] = observations[games]
        return self.view()

    def get_state(self) -> dict[str, Any]:
        return {"stack": copied(self.stack)}

    def set_state(self, state: dict[str, Any]) -> None:
        self.stack = fitting_or_none(self.stack, parts(state, ("stack",), "frame stack")["stack"], "frame stack")

    def view(self) -> np.ndarray:
        """The stacks as the model sees them: channel-first for images."""
        assert self.stack is not None, "view() follows a push()"
        return np.moveaxis(self.stack, -1, 1) if self.stack.ndim == 4 else self.stack.copy()
