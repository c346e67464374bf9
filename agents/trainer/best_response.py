"""A learned best response: a fresh custom DQN trained against one frozen player alone, for
``python -m agents.exploit`` (its section is the env's in zoo_configs/dqn.yml, its opponent
replaced), returned as a player of its final weights."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agents.algorithms.dqn import DQNAgent, learn, replay_buffer, settings
from agents.artifacts.model_players import QPlayer, arena_of
from agents.common.configuration.config import Section, build_section
from agents.common.configuration.config_files import load_section, shipped_config
from agents.common.configuration.registry import ALGORITHMS
from agents.environments.steps import make_steps
from agents.session.console import Console
from agents.session.hooks import Hooks
from agents.session.progress import Progress


def best_response_section(env_id: str, overrides: dict[str, Any]) -> Section:
    """The custom DQN's section of ``env_id`` (zoo_configs/dqn.yml), with ``overrides``."""
    algorithm = ALGORITHMS["custom"]
    raw = load_section(shipped_config(algorithm.config), env_id)
    return build_section(env_id, raw, overrides, algorithm.schema)


class ShowingProgress(Hooks):
    """A loop's hooks that only move a console's progress."""

    def __init__(self, console: Console) -> None:
        self.console = console

    def on_step(self, progress: Progress) -> bool:
        self.console.update(progress.num_timesteps)
        return True


def train_best_response(
    make_target: Callable[[], Any],
    section: Section,
    env_kwargs: dict[str, Any],
    budget: int,
    seed: int,
    device: str,
    console: Console | None = None,
) -> QPlayer:
    """A fresh custom DQN trained for ``budget`` env steps against ``make_target()`` alone (the
    section's own opponent, self-play included, replaced), as a player of its final weights;
    ``console`` shows its progress."""
    train_kwargs = {**section.env_kwargs, **env_kwargs, "opponent": make_target()}
    env = make_steps(section.env_id, train_kwargs, section.n_envs, seed, "native", section.frame_stack)
    try:
        config, spec = settings(section, env.observation_space, env.action_space)
        agent = DQNAgent(spec, config, device, seed=seed)
        buffer = replay_buffer(config, env.observation_space, device, seed=seed)
        hooks = Hooks() if console is None else ShowingProgress(console)
        learn(agent, env, Progress(exploration_horizon=budget), budget, hooks, buffer)
    finally:
        env.close()
    observer = arena_of(section.env_id).observer({**section.env_kwargs, **env_kwargs})
    return QPlayer(agent.q, device, section.frame_stack or 1, observer)
