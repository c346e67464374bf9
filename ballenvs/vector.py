"""The plumbing both native vector envs share: per-env seeding, autoreset, action checks.

A subclass supplies the batched game (``_reset_games``, ``_step_games``, ``_observe``); this
class turns it into a ``gymnasium.vector.VectorEnv`` whose env i behaves exactly like a single
env seeded ``seed + i``: each env draws its randomness from its own generator, in the same
order as the single env would.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ballenvs._checks import check_int

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP)

# Envs that are being reset this step also pass through the batched step (their result is
# discarded); they draw from this throwaway generator so their own stays untouched.
_DISCARDED = np.random.default_rng(0)


class BatchedVectorEnv(VectorEnv):
    """Base of the native vector envs. ``autoreset_mode``: NEXT_STEP (gymnasium's default:
    an env that finished is reset by the next ``step``, whose action it ignores) or SAME_STEP
    (reset at once; the last observation is in ``info["final_obs"]``, masked by ``info["_final_obs"]``)."""

    def __init__(self, num_envs: int, n_actions: int, autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP) -> None:
        self.num_envs = check_int("num_envs", num_envs, 1)
        self._n_actions = n_actions
        mode = AutoresetMode(autoreset_mode) if isinstance(autoreset_mode, str) else autoreset_mode
        if mode not in AUTORESET_MODES:
            raise ValueError(
                f"unknown autoreset_mode {autoreset_mode!r}; valid: {', '.join(m.value for m in AUTORESET_MODES)}"
            )
        self.metadata = {**self.metadata, "autoreset_mode": mode}
        self.autoreset_mode = mode
        self._rngs: list[np.random.Generator] | None = None
        self._needs_reset = np.zeros(num_envs, dtype=bool)
        self._every_env = np.ones(num_envs, dtype=bool)

    # -- what a subclass supplies -------------------------------------------------------------

    def _reset_games(self, games: np.ndarray) -> None:
        """Restart the games in the bool mask, each drawing from its own generator."""
        raise NotImplementedError

    def _step_games(
        self, actions: np.ndarray, rngs: Sequence[np.random.Generator], active: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict]:
        """Step every game; return (rewards, terminated, truncated, info) with the games not in
        ``active`` (those being reset) given zero rewards, no ends and reset-time infos."""
        raise NotImplementedError

    def _observe(self) -> Any:
        raise NotImplementedError

    def _reset_info(self) -> dict:
        return {}

    def _for_every_env(self, info: dict) -> dict:
        """``info`` with gymnasium's ``_key`` mask beside each key, for infos that hold every env."""
        return info | {f"_{key}": self._every_env.copy() for key in info}

    def _set_spaces(self, single_observation_space: spaces.Space) -> None:
        """Batched spaces from one env's observation space and the Discrete actions."""
        self.single_observation_space = single_observation_space
        self.single_action_space = spaces.Discrete(self._n_actions)
        self.observation_space = batch_space(single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)

    # -- the VectorEnv API --------------------------------------------------------------------

    @property
    def rngs(self) -> list[np.random.Generator]:
        if self._rngs is None:
            self._seed(None)
        return self._rngs

    def _seed(self, seed: int | Sequence[int | None] | None) -> None:
        if seed is None or isinstance(seed, (int, np.integer)):
            seeds = [None if seed is None else int(seed) + i for i in range(self.num_envs)]
        else:
            seeds = list(seed)
            if len(seeds) != self.num_envs:
                raise ValueError(f"reset got {len(seeds)} seeds for {self.num_envs} envs")
        # The same generator a single env makes from the same seed.
        self._rngs = [seeding.np_random(s)[0] for s in seeds]

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict]:
        """Reset every env. ``seed``: env i gets seed + i (or the i-th of a list of seeds);
        None keeps each env's generator running, as a single env's reset(seed=None) does."""
        if options:
            raise ValueError(f"{type(self).__name__} takes no reset options, got {options!r}")
        if seed is not None or self._rngs is None:
            self._seed(seed)
        self._reset_games(np.ones(self.num_envs, dtype=bool))
        self._needs_reset[:] = False
        return self._observe(), self._reset_info()

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        actions = self._check_actions(actions)
        rngs = self.rngs
        resetting = (
            self._needs_reset if self.autoreset_mode == AutoresetMode.NEXT_STEP else np.zeros(self.num_envs, dtype=bool)
        )
        active = ~resetting
        step_rngs = rngs
        any_resetting = np.count_nonzero(resetting)  # cheaper than .any() on small arrays
        if any_resetting:
            step_rngs = list(rngs)
            for i in np.flatnonzero(resetting):
                step_rngs[i] = _DISCARDED
        rewards, terminated, truncated, info = self._step_games(actions, step_rngs, active)
        if any_resetting:
            self._reset_games(resetting)
        done = terminated | truncated
        if self.autoreset_mode == AutoresetMode.SAME_STEP:
            if np.count_nonzero(done):
                info["final_obs"], info["_final_obs"] = self._observe(), done.copy()
                self._reset_games(done)
        else:
            self._needs_reset = done
        if self.render_mode == "human":
            self.render()
        return self._observe(), rewards, terminated, truncated, info

    def _check_actions(self, actions: Any) -> np.ndarray:
        array = np.asarray(actions)
        if (
            array.shape != (self.num_envs,)
            or array.dtype.kind not in "iu"
            or array.min() < 0
            or array.max() >= self._n_actions
        ):
            raise ValueError(f"invalid actions {actions!r}; valid: {self.num_envs} ints in 0..{self._n_actions - 1}")
        return array.astype(np.int64)
