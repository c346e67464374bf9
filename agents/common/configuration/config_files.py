"""Hyperparameter files in the RL Baselines3 Zoo format: those shipped with the package, and the
section of one env read from any (checked for its keys and values by
:func:`agents.common.configuration.config.build_section`)."""

from __future__ import annotations

import importlib.resources
from pathlib import Path
from typing import Any

from agents.common.errors import ConfigError, UsageError
from agents.common.readers import read_yaml

#: Where the shipped hyperparameter files are (inside the wheel too).
CONFIG_PACKAGE = "agents.zoo_configs"


def shipped_config(name: str) -> Path:
    """The path of a hyperparameter file shipped with the package, e.g. ``dqn.yml``."""
    return Path(str(importlib.resources.files(CONFIG_PACKAGE) / name))


def load_sections(path: str | Path) -> dict[str, Any]:
    """Every section of the YAML file at ``path``; a file that is unreadable, not UTF-8, not
    YAML (or YAML with aliases or deep nesting) or not a mapping is a one-line ConfigError naming it."""
    try:
        sections = read_yaml(path, "config")
    except UsageError as error:
        raise ConfigError(str(error)) from None
    if not isinstance(sections, dict):
        raise ConfigError(f"config {str(path)!r} must map env ids to sections, got {type(sections).__name__}")
    return sections


def load_section(path: str | Path, env_id: str) -> dict[str, Any]:
    """The raw section for ``env_id`` from the YAML file at ``path``."""
    sections = load_sections(path)
    if env_id not in sections:
        raise ConfigError(f"config {str(path)!r} has no section for {env_id!r}; it has: {', '.join(map(str, sections))}")
    section = sections[env_id]
    if not isinstance(section, dict):
        raise ConfigError(f"section {env_id!r} of {str(path)!r} must be a mapping of hyperparameters")
    return dict(section)
