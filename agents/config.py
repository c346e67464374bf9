"""Hyperparameters from ``zoo_configs/dqn.yml``, in the RL Baselines3 Zoo format.

One section per env id. Keys mean what they mean to stable-baselines3's ``DQN`` (plus the
zoo's ``n_timesteps``, ``policy``, ``n_envs``, ``frame_stack`` and ``env_kwargs``), so both
trainers and ``python -m rl_zoo3.train`` read the same file the same way.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

DEFAULT_CONFIG = Path(__file__).resolve().parent.parent / "zoo_configs" / "dqn.yml"

#: Keys the zoo reads for itself rather than passing to the algorithm.
RUN_KEYS = ("n_timesteps", "policy", "n_envs", "frame_stack", "env_kwargs")

#: Expected type of the numeric keys (ints are accepted where floats are).
NUMBER_KEYS: dict[str, type] = {
    "n_timesteps": int,
    "n_envs": int,
    "frame_stack": int,
    "learning_rate": float,
    "buffer_size": int,
    "learning_starts": int,
    "batch_size": int,
    "tau": float,
    "gamma": float,
    "gradient_steps": int,
    "target_update_interval": int,
    "exploration_fraction": float,
    "exploration_initial_eps": float,
    "exploration_final_eps": float,
    "max_grad_norm": float,
    "n_steps": int,
}

#: Keys that also take the zoo's linear schedule, "lin_<initial value>" (falling to 0 at the end).
SCHEDULE_KEYS = ("learning_rate",)
_LINEAR_SCHEDULE = re.compile(r"^lin_(\d+(\.\d*)?([eE][-+]?\d+)?)$")

_BARE_WORD = re.compile(r"^[A-Za-z_][\w.-]*$")


class ConfigError(ValueError):
    """A config file, section, key or value that cannot be used; the message says which."""


@dataclass
class Section:
    """One env's hyperparameters, split into what the run needs and what the algorithm takes."""

    env_id: str
    policy: str
    n_timesteps: int
    n_envs: int = 1
    frame_stack: int | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    algo_kwargs: dict[str, Any] = field(default_factory=dict)

    def as_zoo_section(self) -> dict[str, Any]:
        """Back to the zoo's flat form, as written to a run's config.yml."""
        section: dict[str, Any] = {"policy": self.policy, "n_timesteps": self.n_timesteps, "n_envs": self.n_envs}
        if self.frame_stack:
            section["frame_stack"] = self.frame_stack
        if self.env_kwargs:
            section["env_kwargs"] = dict(self.env_kwargs)
        section.update(self.algo_kwargs)
        return section


def load_section(path: str | Path, env_id: str) -> dict[str, Any]:
    """The raw section for ``env_id`` from the YAML file at ``path``."""
    path = Path(path)
    try:
        text = path.read_text()
    except OSError as error:
        raise ConfigError(f"cannot read config {str(path)!r}: {error.strerror}") from None
    try:
        sections = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"config {str(path)!r} is not valid YAML: {error}") from None
    if not isinstance(sections, dict):
        raise ConfigError(f"config {str(path)!r} must map env ids to sections, got {type(sections).__name__}")
    if env_id not in sections:
        raise ConfigError(f"config {str(path)!r} has no section for {env_id!r}; it has: {', '.join(map(str, sections))}")
    section = sections[env_id]
    if not isinstance(section, dict):
        raise ConfigError(f"section {env_id!r} of {str(path)!r} must be a mapping of hyperparameters")
    return dict(section)


def parse_overrides(pairs: Iterable[str], flag: str) -> dict[str, Any]:
    """``["key=value", ...]`` from the command line; values are Python literals
    (``1.0e-4``, ``True``, ``[64, 64]``, ``'text'``) or bare words (``CnnPolicy``)."""
    parsed: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} expects key=value, got {pair!r}")
        try:
            parsed[key] = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            # A call such as dict(net_arch=[64]) is evaluated later, as the zoo does.
            if _BARE_WORD.match(text) or (key.endswith("_kwargs") and text.startswith("dict(")):
                parsed[key] = text
            else:
                raise ConfigError(
                    f"{flag} value for {key!r} does not parse: {text!r} (expected a number, True/False, a list, or a word)"
                ) from None
    return parsed


def build_section(
    env_id: str, raw: dict[str, Any], overrides: dict[str, Any], supported: Iterable[str], trainer: str
) -> Section:
    """Merge the command-line overrides into the raw section, check every key and value."""
    merged = {**raw, **overrides}
    supported = set(supported) | set(RUN_KEYS)
    unknown = sorted(set(merged) - supported)
    if unknown:
        raise ConfigError(
            f"unknown hyperparameter(s) for {trainer}: {', '.join(unknown)}; valid: {', '.join(sorted(supported))}"
        )
    for key, kind in NUMBER_KEYS.items():
        if key in merged:
            value = merged[key]
            if key in SCHEDULE_KEYS and isinstance(value, str) and _LINEAR_SCHEDULE.match(value):
                continue
            ok = isinstance(value, (int, float)) and not isinstance(value, bool)
            if not ok or (kind is int and isinstance(value, float) and not value.is_integer()):
                expected = (
                    "an integer"
                    if kind is int
                    else "a number" + (", or lin_<number> for a linear schedule" if key in SCHEDULE_KEYS else "")
                )
                raise ConfigError(f"hyperparameter {key}={value!r} must be {expected}")
            merged[key] = kind(value)
    for key in ("policy", "n_timesteps"):
        if key not in merged:
            raise ConfigError(f"section {env_id!r} needs {key!r}")
    env_kwargs = merged.pop("env_kwargs", None) or {}
    if not isinstance(env_kwargs, dict):
        raise ConfigError(f"env_kwargs must be a mapping, got {env_kwargs!r}")
    return Section(
        env_id=env_id,
        policy=merged.pop("policy"),
        n_timesteps=merged.pop("n_timesteps"),
        n_envs=merged.pop("n_envs", 1),
        frame_stack=merged.pop("frame_stack", None),
        env_kwargs=env_kwargs,
        algo_kwargs=merged,
    )


def schedule(value: float | str) -> tuple[float, bool]:
    """A schedulable value as (initial value, whether it falls linearly to 0 over training)."""
    if isinstance(value, str):
        match = _LINEAR_SCHEDULE.match(value)
        if not match:
            raise ConfigError(f"schedule {value!r} is not a number or lin_<number>")
        return float(match.group(1)), True
    return float(value), False


class LinearSchedule:
    """The zoo's ``lin_<x>``: x times the fraction of training left (SB3 calls it with that)."""

    def __init__(self, initial: float) -> None:
        self.initial = initial

    def __call__(self, progress_remaining: float) -> float:
        return progress_remaining * self.initial


def eval_kwargs(key: str, value: Any) -> dict[str, Any]:
    """``policy_kwargs`` or ``replay_buffer_kwargs`` as the zoo reads them: a dict, or a
    string like ``"dict(net_arch=[256, 256])"`` that evaluates to one."""
    if value is None or isinstance(value, dict):
        return dict(value or {})
    import torch.nn as nn

    try:
        result = eval(value, {"__builtins__": {}, "dict": dict, "nn": nn})  # the zoo's own convention
    except Exception as error:
        raise ConfigError(f"{key} {value!r} does not evaluate: {error}") from None
    if not isinstance(result, dict):
        raise ConfigError(f"{key} {value!r} must evaluate to a dict")
    return result
