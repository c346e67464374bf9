"""What every trainer does before and around its learning loop: check the input, make the
run folder, build the envs. Everything that can be wrong is checked before the folder exists."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from agents.cli import check_counts, resolve_device
from agents.config import Section, build_section, load_section, parse_overrides
from agents.envs import check_env_id, make_vec
from agents.runs import CHECKPOINTS, CONFIG_NAME, FINAL_MODEL, new_run_dir, write_yaml

EVAL_SEED_OFFSET = 10_000  # evaluation envs never share seeds with training envs
SUMMARY_NAME = "summary.yml"


@dataclass
class RunSetup:
    section: Section
    timesteps: int
    vec_env: str
    device: str
    seed: int
    run_dir: Path
    resume: Path | None
    checked: Any = None  # what the trainer's check returned (e.g. the model to resume)


#: A trainer's own checks, run before the run folder exists: given the config section, the
#: observation and action spaces the learner will see, and the model to resume (or None).
Check = Callable[[Section, spaces.Space, spaces.Space, "Path | None", str], Any]


def resolve_resume(path: str, model_suffix: str) -> Path:
    """The model file to resume from: ``path`` itself, or a run folder's final model, or
    failing that its latest checkpoint."""
    resume = Path(path)
    if resume.is_dir():
        final = resume / f"{FINAL_MODEL}{model_suffix}"
        checkpoints = sorted((resume / CHECKPOINTS).glob(f"*{model_suffix}"), key=lambda p: p.stat().st_mtime)
        if final.exists():
            return final
        if checkpoints:
            return checkpoints[-1]
        raise FileNotFoundError(f"--resume {path!r}: no {FINAL_MODEL}{model_suffix} nor checkpoints in that folder")
    if not resume.is_file():
        raise FileNotFoundError(f"--resume {path!r}: no such model file or run folder")
    return resume


def prepare_run(
    args: argparse.Namespace,
    algo: str,
    supported_keys: Iterable[str],
    trainer: str,
    model_suffix: str,
    check: Check | None = None,
) -> RunSetup:
    """Check every input, then create ``<log-dir>/<algo>/<env>_<n>/`` with its config.yml."""
    check_counts(args)
    check_env_id(args.env)
    section = build_section(
        args.env,
        load_section(args.config, args.env),
        parse_overrides(args.hyperparams, "--hyperparams"),
        supported_keys,
        trainer,
    )
    section.env_kwargs.update(parse_overrides(args.env_kwargs, "--env-kwargs"))
    section.n_envs = args.n_envs or section.n_envs
    vec_env = args.vec_env or ("subproc" if section.n_envs > 1 else "dummy")
    timesteps = args.timesteps or section.n_timesteps
    device = resolve_device(args.device)
    resume = resolve_resume(args.resume, model_suffix) if args.resume else None
    # Bad env options fail here, not in a worker; the spaces are those the learner will see.
    probe = make_vec(args.env, section.env_kwargs, 1, None, "dummy", section.frame_stack)
    checked = check(section, probe.observation_space, probe.action_space, resume, device) if check else None
    probe.close()
    run_dir = new_run_dir(args.log_dir, algo, args.env)
    write_yaml(
        run_dir / CONFIG_NAME,
        {
            "algo": algo,
            "env_id": args.env,
            "seed": args.seed,
            "device": device,
            "vec_env": vec_env,
            "timesteps": timesteps,
            "resumed_from": str(resume) if resume else None,
            "hyperparams": section.as_zoo_section(),
        },
    )
    return RunSetup(section, timesteps, vec_env, device, args.seed, run_dir, resume, checked)


def make_train_env(setup: RunSetup, make: Callable[..., Any] = make_vec) -> Any:
    """The run's training envs, monitored into its folder; ``make``: how (make_vec's signature)."""
    s = setup.section
    return make(s.env_id, s.env_kwargs, s.n_envs, setup.seed, setup.vec_env, s.frame_stack, str(setup.run_dir / "monitor"))


def make_eval_env(setup: RunSetup) -> VecEnv:
    s = setup.section
    return make_vec(s.env_id, s.env_kwargs, 1, setup.seed + EVAL_SEED_OFFSET, "dummy", s.frame_stack)


def finish_run(run_dir: Path, steps: int, seconds: float, total_steps: int) -> dict[str, Any]:
    """Write ``summary.yml`` (steps trained, seconds, steps/s) and print it in one line."""
    summary = {
        "steps": steps,
        "seconds": round(seconds, 3),
        "steps_per_s": round(steps / seconds, 1) if seconds > 0 else None,
        "total_steps": total_steps,
    }
    write_yaml(run_dir / SUMMARY_NAME, summary)
    rate = f"{summary['steps_per_s']} steps/s"
    print(f"trained {steps} steps in {seconds:.1f} s ({rate}); total steps: {total_steps}; run folder: {run_dir}")
    return summary
