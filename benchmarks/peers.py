"""The peers a practitioner would try instead of our DQN, built from the same config section: sbx's
DQN (stable-baselines3's API in JAX) on the same vector env.

sbx takes most of stable-baselines3's DQN keys; :func:`sbx_kwargs` hands it those it takes and
names those it lacks (our ``max_grad_norm``: sbx's DQN does not clip gradients; ``policy_kwargs``
other than ``net_arch``: its networks are flax modules; Dict observations: it has no
MultiInputPolicy). sbx is an optional extra (``pip install -e ".[peers]"``): without it the
peers are skipped with one line.
"""

from __future__ import annotations

import importlib.util
import inspect
import time
from typing import Any

from agents.common.configuration.config import Section, parse_kwargs, schedule
from agents.environments.envs import make_vec

#: The policies sbx's DQN has (stable-baselines3's names).
SBX_POLICIES = ("MlpPolicy", "CnnPolicy")


def sbx_available() -> bool:
    return importlib.util.find_spec("sbx") is not None


def sbx_kwargs(section: Section) -> tuple[dict[str, Any], list[str]]:
    """sbx DQN's keyword arguments from a section's keys, and the keys (or values) it lacks."""
    from sbx import DQN

    taken = set(inspect.signature(DQN.__init__).parameters)
    kwargs: dict[str, Any] = {}
    lacking: list[str] = []
    if section.policy not in SBX_POLICIES:
        lacking.append(f"policy {section.policy} (sbx's DQN has {', '.join(SBX_POLICIES)})")
    for key, value in section.algo_kwargs.items():
        if key == "policy_kwargs":
            policy_kwargs = parse_kwargs(key, value)
            kwargs["policy_kwargs"] = {k: v for k, v in policy_kwargs.items() if k == "net_arch"}
            lacking += [f"policy_kwargs {k}" for k in policy_kwargs if k != "net_arch"]
        elif key == "learning_rate":
            initial, linear = schedule(value)
            kwargs[key] = (lambda remaining, initial=initial: remaining * initial) if linear else initial
        elif key in taken:
            kwargs[key] = value
        elif value not in (0, None, False):  # keys of ours left at their off value lack nothing
            lacking.append(key)
    return kwargs, lacking


def sbx_rate(section: Section, steps: int, vec_env: str, seed: int = 0, warmup: int = 500) -> dict[str, Any]:
    """sbx's DQN on ``section`` with the env ``vec_env`` makes: env steps per second over ``steps``
    after ``learning_starts`` and ``warmup`` more (its JIT compiled), and what it lacks."""
    from sbx import DQN

    kwargs, lacking = sbx_kwargs(section)
    env = make_vec(section.env_id, section.env_kwargs, section.n_envs, seed, vec_env, section.frame_stack)
    try:
        model = DQN(section.policy, env, seed=seed, **kwargs)
        model.learn(section.algo_kwargs.get("learning_starts", 100) + warmup)
        before, start = model.num_timesteps, time.perf_counter()
        model.learn(steps, reset_num_timesteps=False)
        elapsed = time.perf_counter() - start
    finally:
        env.close()
    return {"steps_per_s": (model.num_timesteps - before) / elapsed, "lacking": lacking}
