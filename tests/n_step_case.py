"""One n-step scenario both trainers' replay buffers are checked against: two envs, six
steps; env 0's episode is truncated after step 2, env 1's terminates after step 4."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, NamedTuple

import numpy as np
import pytest

STEPS = 6
ENDED = {(0, 2): "truncated", (1, 4): "terminated"}


def reward(env: int, t: int) -> float:
    return t + 1.0 if env == 0 else 2 * t + 1.0


def observation(env: int, t: int) -> float:
    """Also the action stored, so that a sample says which (env, t) it starts at."""
    return 10 * env + t


def expected(env: int, t: int, n_steps: int, gamma: float) -> tuple[float, float, float, float]:
    """(n-step reward, discount, next observation, terminated) counted by hand: sum until
    an episode end, ``n_steps`` steps or the newest stored step."""
    total, k = 0.0, 0
    while True:
        total += gamma**k * reward(env, t + k)
        k += 1
        if (env, t + k - 1) in ENDED or k == n_steps or t + k == STEPS:
            break
    last = t + k - 1
    return total, gamma**k, observation(env, last) + 0.5, float(ENDED.get((env, last)) == "terminated")


class Step(NamedTuple):
    """One step of both envs as arrays: observations (2, 1), rewards and the two kinds of end."""

    observations: np.ndarray
    rewards: np.ndarray
    terminated: np.ndarray
    ended: np.ndarray  # terminated or truncated


def steps() -> Iterator[Step]:
    for t in range(STEPS):
        yield Step(
            np.array([[observation(e, t)] for e in (0, 1)], dtype=np.float32),
            np.array([reward(e, t) for e in (0, 1)]),
            np.array([ENDED.get((e, t)) == "terminated" for e in (0, 1)]),
            np.array([(e, t) in ENDED for e in (0, 1)]),
        )


def fill(buffer: Any) -> Any:
    """The scenario added to one of the custom agents' replay buffers (the observation doubles as
    the action; the next observation is it + 0.5)."""
    for step in steps():
        value = step.observations
        buffer.add(value, value + 0.5, value[:, 0].astype(np.int64), step.rewards, step.terminated, step.ended)
    return buffer


def check_sampled(batch: Any, n_steps: int, gamma: float, next_values: Any, terminated: Any) -> set[tuple[int, int]]:
    """Every row of a sampled batch as :func:`expected` counts it (``next_values`` and
    ``terminated``: the batch's next observations as one number a row, and its end flags, as the
    buffer names them); the (env, t) pairs sampled."""
    seen = set()
    for row in range(len(batch.actions)):
        env, t = divmod(int(batch.actions[row]), 10)
        seen.add((env, t))
        reward, discount, next_obs, ended = expected(env, t, n_steps, gamma)
        assert batch.rewards[row].item() == pytest.approx(reward) and batch.discounts[row].item() == pytest.approx(discount)
        assert next_values[row].item() == next_obs and terminated[row].item() == ended
    return seen
