"""One n-step scenario both trainers' replay buffers are checked against: two envs, six
steps; env 0's episode is truncated after step 2, env 1's terminates after step 4."""

from __future__ import annotations

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
