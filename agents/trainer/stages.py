"""A run of several stages, one command (``python -m agents.train --algo ALGO --config FILE``): a
config section that lists ``stages`` trains each in turn, each a whole run of its own algorithm and
section, a later one reading an earlier one's run folder (a teacher, a start), so that a learner
that needs stages (the state learner, its pixel student, the student fine-tuned) is trained from
nothing by the command that trains any other. ``--algo`` names the last stage's algorithm: the
final model is of it.

    BallSumo-v0:
      stages: "[dict(algo='ppo', config='ppo.yml'),
                dict(algo='distill', config='distill_pixels_from_ppo.yml', hyperparams=dict(teacher='previous')),
                dict(algo='ppo', config='ppo_pixels_from_the_chain.yml', hyperparams=dict(start_from='previous'))]"

A stage's ``config`` is a file beside the staged one, else one the package ships; ``previous`` in its
``hyperparams`` is the run folder of the stage before. The staged run's folder,
``<log-dir>/<algo>/<env>_<n>/``, holds the stages' own run folders (``stages/``), ``stages.yml``
(each stage's command line, its folder and its wall-clock), and the last stage's ``config.yml`` and
final model, so that it plays, is evaluated and loads (``agents.load_player``) as the last stage's
run. The command's ``--seed``, ``--threads``, ``--device``, ``--vec-env``, ``--no-progress`` and
``--timesteps`` (each stage's budget) go to every stage.
"""

from __future__ import annotations

import argparse
import shutil
import time
from pathlib import Path
from typing import Any

from agents.artifacts.runs import CONFIG_NAME, new_run_dir, read_config, write_yaml
from agents.common.configuration.config import parse_kwargs
from agents.common.configuration.config_files import load_section, load_sections, shipped_config
from agents.common.configuration.registry import ALGORITHMS
from agents.common.errors import UsageError, note
from agents.session.cli import DEFAULT_ENV

#: The section key that makes a run staged.
STAGES = "stages"
#: A stage's hyperparameter value that stands for the run folder of the stage before.
PREVIOUS = "previous"
#: The command's flags every stage takes, with a value, and without.
FORWARDED = ("seed", "threads", "device", "vec_env", "timesteps")
FORWARDED_SWITCHES = ("no_progress",)
#: Flags that would mean different things to different stages: refused with a staged section.
REFUSED = ("hyperparams", "env_kwargs", "resume", "opponent", "teacher", "n_envs")


def staged_section(args: argparse.Namespace) -> list[dict[str, Any]] | None:
    """The stages the command's section lists, checked (None: a section of one run)."""
    if args.config is None or args.resume:
        return None
    env_id = args.env or DEFAULT_ENV
    sections = load_sections(args.config)
    raw = sections.get(env_id)
    if not isinstance(raw, dict) or STAGES not in raw:
        return None
    if set(raw) != {STAGES}:
        raise UsageError(f"config {args.config!r}: a section with stages holds nothing else, got {', '.join(sorted(raw))}")
    stages = parse_kwargs(STAGES, f"dict(stages={raw[STAGES]})")[STAGES] if isinstance(raw[STAGES], str) else raw[STAGES]
    if not isinstance(stages, list) or not stages:
        raise UsageError(f"config {args.config!r}: stages must be a list of dict(algo=..., config=..., hyperparams=...)")
    checked = [_checked_stage(stage, n, Path(args.config), env_id) for n, stage in enumerate(stages, 1)]
    if checked[-1]["algo"] != args.algo:
        raise UsageError(
            f"config {args.config!r}: its last stage trains {checked[-1]['algo']}; give --algo {checked[-1]['algo']}"
        )
    given = [flag for flag in REFUSED if getattr(args, flag, None) not in (None, [], False)]
    if given:
        raise UsageError(f"--{given[0].replace('_', '-')}: each stage's section says it; change a stage's config instead")
    return checked


def _checked_stage(stage: Any, n: int, staged: Path, env_id: str) -> dict[str, Any]:
    what = f"stage {n}"
    if not isinstance(stage, dict) or not set(stage) <= {"algo", "config", "hyperparams"} or "algo" not in stage:
        raise UsageError(f"{what}: expected dict(algo=..., config=..., hyperparams=...), got {stage!r:.100}")
    if stage["algo"] not in ALGORITHMS:
        raise UsageError(f"{what}: unknown algo {stage['algo']!r}; valid: {', '.join(ALGORITHMS)}")
    config = stage.get("config") or ALGORITHMS[stage["algo"]].config
    beside = staged.parent / config
    path = beside if beside.is_file() else shipped_config(config)
    if not path.is_file():
        raise UsageError(f"{what}: config {config!r} is neither beside {str(staged)!r} nor shipped")
    section = load_section(path, env_id)
    if STAGES in section:
        raise UsageError(f"{what}: its section lists stages of its own; a stage is one run")
    hyperparams = stage.get("hyperparams") or {}
    if not isinstance(hyperparams, dict):
        raise UsageError(f"{what}: hyperparams must be a dict, got {hyperparams!r:.80}")
    if n == 1 and PREVIOUS in hyperparams.values():
        raise UsageError(f"{what}: the first stage has no previous stage to read")
    return {"algo": stage["algo"], "config": str(path), "hyperparams": hyperparams}


def run_stages(args: argparse.Namespace, stages: list[dict[str, Any]], train: Any) -> Path:
    """Train every stage in turn with ``train`` (the trainer's ``main``); the staged run's folder."""
    env_id = args.env or DEFAULT_ENV
    run_dir = new_run_dir(args.log_dir, args.algo, env_id)
    forwarded: list[str] = []
    for flag in FORWARDED:
        if getattr(args, flag, None) is not None:
            forwarded += [f"--{flag.replace('_', '-')}", str(getattr(args, flag))]
    forwarded += [f"--{flag.replace('_', '-')}" for flag in FORWARDED_SWITCHES if getattr(args, flag, False)]
    done: list[dict[str, Any]] = []
    previous: Path | None = None
    for n, stage in enumerate(stages, 1):
        pairs = [f"{key}={previous if value == PREVIOUS else value}" for key, value in stage["hyperparams"].items()]
        argv = ["--algo", stage["algo"], "--env", env_id, "--config", stage["config"], *forwarded]
        argv += ["--log-dir", str(run_dir / STAGES), *(["--hyperparams", *pairs] if pairs else [])]
        note(f"stage {n} of {len(stages)}: python -m agents.train {' '.join(argv)}")
        began = time.monotonic()
        previous = Path(train(argv))
        done.append({"stage": n, "argv": argv, "run": str(previous), "wall_s": round(time.monotonic() - began, 1)})
        write_yaml(run_dir / "stages.yml", {"stages": done})
    assert previous is not None  # a staged section has a stage
    last = read_config(previous)
    for path in previous.iterdir():  # the final model and what reads it: the staged run plays as its last stage
        if path.is_file() and (path.name in (CONFIG_NAME, "summary.yml") or path.stem.startswith("final_")):
            shutil.copy2(path, run_dir / path.name)
    wall = sum(stage["wall_s"] for stage in done)
    note(f"{len(stages)} stages in {wall:.0f} s; the final model, of {last['algo']}: {run_dir}")
    return run_dir
