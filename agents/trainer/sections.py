"""A run's config section: its config file's with the command line's changes, or the section of
the run it resumes (whose env and settings no flag may contradict), every value checked."""

from __future__ import annotations

import argparse
from typing import Any

from agents.artifacts.models import Resumed
from agents.common.configuration.config import Section, build_section, parse_overrides
from agents.common.configuration.config_files import load_section
from agents.common.configuration.registry import Algorithm
from agents.common.errors import UsageError
from agents.session.cli import DEFAULT_ENV


def run_section(args: argparse.Namespace, algo: Algorithm, resumed: Resumed | None) -> tuple[Section, str | None]:
    """The run's section, every value checked, and its opponent (a built-in player, self, or None):
    the resumed run's, with only its resumable hyperparameters changed, or the config file's with
    the command line's changes."""
    if resumed is not None:
        _refuse_contradictions(args, resumed.config)
        source = resumed.config
        env_id, raw, opponent = source["env_id"], source["hyperparams"], source.get("opponent")
    else:
        env_id, opponent = args.env or DEFAULT_ENV, args.opponent
        raw = load_section(args.config or algo.config_path(), env_id)
    overrides = parse_overrides(args.hyperparams, "--hyperparams")
    if resumed is not None:
        resumable = algo.resumable_keys
        fixed = sorted(key for key, value in overrides.items() if key not in resumable and value != raw.get(key))
        if fixed:
            raise UsageError(f"--resume: {', '.join(fixed)} cannot change in a resumed run; these can: {', '.join(resumable)}")
    if getattr(args, "teacher", None) is not None:  # a resumed run's own teacher (no other, above)
        overrides["teacher"] = args.teacher
    section = build_section(env_id, raw, overrides, algo.schema)
    if resumed is not None:
        return section, opponent
    section.env_kwargs = {**section.env_kwargs, **parse_overrides(args.env_kwargs, "--env-kwargs")}
    if section.env_kwargs.get("render_mode") is not None:
        raise UsageError(
            f"--env-kwargs render_mode={section.env_kwargs['render_mode']!r}: a run trains unrendered "
            "(watch a model with agents.evaluate --render or --video)"
        )
    section.n_envs = args.n_envs or section.n_envs  # --n-envs: checked with the flags (MAX_ENVS)
    if section.env_kwargs.get("opponent") == "self":  # a section that trains by self-play, unless told otherwise
        section_opponent = section.env_kwargs.pop("opponent")
        opponent = opponent or section_opponent
    if opponent is not None and opponent != "self":
        section.env_kwargs["opponent"] = opponent
    return section, opponent


def _refuse_contradictions(args: argparse.Namespace, source: dict[str, Any]) -> None:
    """A resumed run keeps its env, its envs and its opponent: a flag may repeat them, not change them."""
    hyper = source["hyperparams"]
    for flag, given, recorded in [
        ("--env", args.env, source["env_id"]),
        ("--n-envs", args.n_envs, hyper.get("n_envs", 1)),
        ("--vec-env", args.vec_env, source.get("vec_env")),
        ("--opponent", args.opponent, source.get("opponent")),
        ("--teacher", getattr(args, "teacher", None), hyper.get("teacher")),
    ]:
        if given is not None and given != recorded:
            raise UsageError(f"--resume: {flag} {given!r} contradicts the resumed run's {recorded!r}; leave {flag} out")
    if args.env_kwargs:
        raise UsageError(f"--resume: --env-kwargs cannot change the resumed run's env options {hyper.get('env_kwargs', {})}")
    if args.config is not None:
        raise UsageError("--resume: the hyperparameters are the resumed run's; change the resumable ones with --hyperparams")
