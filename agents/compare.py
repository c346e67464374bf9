"""Train agents side by side on one env and compare them: stable-baselines3's DQN, our custom DQN, PQN.

    python -m agents.compare --env UAVGrid-v0 --timesteps 100000 --seeds 3 [--agents dqn custom pqn]
    python -m agents.compare --from-runs runs/compare/UAVGrid-v0_1      # re-plot, no training
    python -m agents.compare --from-study UAVGrid-v0-custom-seeds-12 [--storage URL]   # an agents.tune seed sweep

Every agent runs with its algorithm's config section (the DQNs share zoo_configs/dqn.yml, PQN
has zoo_configs/pqn.yml), the same seeds and evaluation episodes, through its own trainer (the
trainers' flags mean the same here), for its section's n_timesteps unless --timesteps gives one
budget to all, evaluated 20 times per run unless --eval-freq says otherwise. Baselines come
from the env's reference policies (:mod:`ballenvs.reference`): their mean returns are the
dashed lines, and each run's final model is scored by the env's yardsticks (UAVGrid: its
return minus the greedy policy's on the same seeded episodes; BallDuel: its win rate against
each built-in opponent). Output in runs/compare/<env>_<n>/: curves.png, report.md, curves.csv,
and manifest.json naming the trainers' run folders (under runs/compare/<env>_<n>/runs/).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from agents.artifacts.runs import (
    check_log_dir,
    new_run_dir,
    read_config,
)
from agents.artifacts.video import check_video_path
from agents.common.configuration.registry import ALGORITHMS, algorithm
from agents.common.errors import UsageError, note, refuse_repeats
from agents.common.hardware import machine
from agents.common.readers import count
from agents.session.cli import EVAL_EPISODES, Parser, add_progress_flag, add_run_flags, run_cli
from agents.studies.comparison import (
    MAX_SCORE_EPISODES,
    analyse,
    evaluation_schedule,
    read_manifest,
    save_manifest,
    write_outputs,
)
from agents.trainer import run as train
from ballenvs.reference import reference_for

#: Bounds of the figures a comparison plays: each seed is a whole training run, each scored
#: episode a game per yardstick, so a larger number is a typo, not a plan.
MAX_SEEDS = 1_000


def from_studies(args: argparse.Namespace, argv: list[str] | None) -> dict[str, Any]:
    """A comparison of agents.tune studies' finished runs (typically seed sweeps), one agent per study."""
    import optuna

    from agents.studies.storage import check_study_name, load_existing_study

    runs: dict[str, list[str]] = {}
    env_ids, plan = set(), {}
    for name in args.from_study:
        check_study_name(name, "--from-study")
        study = load_existing_study(name, args.storage, Path(args.tune_dir) / name, flag="--from-study: ")
        finished = [t for t in study.trials if t.state == optuna.trial.TrialState.COMPLETE and "run_dir" in t.user_attrs]
        if not finished:
            raise UsageError(f"--from-study: study {name!r} has no finished run")
        runs[name] = [t.user_attrs["run_dir"] for t in finished]
        plan = study.user_attrs
        missing = [key for key in ("env", "timesteps") if key not in plan]
        if missing or not all(isinstance(run, str) for run in runs[name]):
            lacks = f"its plan lacks {', '.join(missing)}" if missing else "its trials' run folders are not paths"
            raise UsageError(f"--from-study: study {name!r} is not one agents.tune wrote ({lacks})")
        count(plan["timesteps"], f"--from-study: study {name!r}'s timesteps", 1)
        env_ids.add(str(plan["env"]))
    if len(env_ids) != 1:
        raise UsageError(f"--from-study: the studies ran on different envs: {sorted(env_ids)}")
    env_id = env_ids.pop()
    try:
        reference_for(env_id)
    except ValueError:
        raise UsageError(f"--from-study: the studies ran on {env_id!r:.80}, none of the envs a comparison scores") from None
    config = read_config(Path(runs[next(iter(runs))][0]))
    env_kwargs = dict(config["hyperparams"].get("env_kwargs") or {})
    figures = {"timesteps": plan["timesteps"], "seeds": max(len(dirs) for dirs in runs.values()), **evaluation_schedule(runs)}
    check_log_dir(args.log_dir, "compare")
    manifest = new_manifest(args, argv, env_id, env_kwargs, figures, runs)
    # Every run read and scored before the folder exists: a refusal leaves none.
    agents = analyse(manifest, not args.no_progress)
    out_dir = new_run_dir(args.log_dir, "compare", env_id)
    save_manifest(out_dir, manifest)
    return write_outputs(out_dir, manifest, args.video, agents)


def new_manifest(
    args: argparse.Namespace,
    argv: list[str] | None,
    env_id: str,
    env_kwargs: dict[str, Any],
    figures: dict[str, Any],
    runs: dict[str, list[str]],
) -> dict[str, Any]:
    """A comparison's manifest: the env, ``figures`` (step budgets, seeds, the evaluation
    schedule), the env's reference baselines, the machine, the command and ``runs``."""
    reference = reference_for(env_id)
    return {
        "env_id": env_id,
        "env_kwargs": env_kwargs,
        **figures,
        "score_episodes": args.score_episodes,
        "hardware": machine(),
        "command": "python -m agents.compare " + " ".join(argv if argv is not None else sys.argv[1:]),
        "baselines": reference.baselines(env_id, env_kwargs),
        "heuristic": reference.heuristic,
        "runs": runs,
    }


def parse(argv: list[str] | None) -> argparse.Namespace:
    parser = Parser(prog="python -m agents.compare", description=__doc__.split("\n\n")[0].strip())
    add_run_flags(parser, resumes=False, configured_evaluations=False)
    # Each agent's own budget unless one is given: PQN trades samples for speed, so equal steps
    # would not be a fair race.
    parser.set_defaults(env="UAVGrid-v0", timesteps=None, eval_freq=None, eval_episodes=EVAL_EPISODES)
    parser.add_argument("--seeds", type=int, default=3, help="runs per agent, seeded 0, 1, ...")
    parser.add_argument(
        "--agents",
        nargs="+",
        default=["dqn", "custom"],
        help=f"which algorithms to train: any of {', '.join(ALGORITHMS)} (the registry's names)",
    )
    parser.add_argument("--score-episodes", type=int, default=100, help="episodes per yardstick for each final model")
    parser.add_argument(
        "--from-runs", default=None, metavar="COMPARE_DIR", help="re-plot an earlier compare folder without training"
    )
    parser.add_argument(
        "--from-study",
        nargs="+",
        default=None,
        metavar="STUDY",
        help="draw the finished trials of agents.tune studies (seed sweeps: --seeds), each study an agent; no training",
    )
    parser.add_argument(
        "--storage", default=None, help="with --from-study: the studies' storage (default: their journal files)"
    )
    parser.add_argument("--tune-dir", default="runs/tune", help="with --from-study: agents.tune's --log-dir")
    parser.add_argument(
        "--video", default=None, metavar="FILE", help="an episode of the best agent's final model (seed 0), .mp4 or .gif"
    )
    add_progress_flag(parser, "each run's evaluations are still printed")
    args = parser.parse_args(argv)
    if args.video is not None:
        check_video_path(args.video)
    for flag, high in (("seeds", MAX_SEEDS), ("score_episodes", MAX_SCORE_EPISODES)):
        if not 1 <= getattr(args, flag) <= high:
            raise UsageError(f"--{flag.replace('_', '-')} must be in [1, {high:,}], got {getattr(args, flag)}")
    for name in args.agents:
        algorithm(name)
    refuse_repeats("--agents", args.agents)
    return args


def main(argv: list[str] | None = None) -> dict[str, Any]:
    args = parse(argv)
    if args.from_runs:
        out_dir = Path(args.from_runs)
        return write_outputs(out_dir, read_manifest(args.from_runs), args.video, progress=not args.no_progress)
    if args.from_study:
        return from_studies(args, argv)

    common = ["--env", args.env, "--device", args.device, "--threads", args.threads]
    common += ["--eval-episodes", str(args.eval_episodes), "--save-freq", "0", *(["--no-progress"] * args.no_progress)]
    if args.timesteps is not None:
        common += ["--timesteps", str(args.timesteps)]
    for flag, value in (
        ("--vec-env", args.vec_env),
        ("--n-envs", args.n_envs),
        ("--config", args.config),
        ("--opponent", args.opponent),
    ):
        if value is not None:
            common += [flag, str(value)]
    common += ["--hyperparams", *args.hyperparams, "--env-kwargs", *args.env_kwargs]
    trainers = {ALGORITHMS[name].label: ALGORITHMS[name] for name in args.agents}
    # Every trainer checks its command line before any folder exists, compare's own included.
    setups = {
        label: train.prepare([*common, *algo.trainer_flags, "--seed", "0"], make_folder=False)[1]
        for label, algo in trainers.items()
    }
    budgets = {label: setup.timesteps for label, setup in setups.items()}
    eval_freqs = {label: args.eval_freq or max(steps // 20, 1) for label, steps in budgets.items()}
    flags = {
        label: [*common, *algo.trainer_flags, "--timesteps", str(budgets[label]), "--eval-freq", str(eval_freqs[label])]
        for label, algo in trainers.items()
    }
    env_kwargs = next(iter(setups.values())).section.env_kwargs
    figures = {"timesteps": budgets, "seeds": args.seeds, "eval_freq": eval_freqs, "eval_episodes": args.eval_episodes}
    check_log_dir(args.log_dir, "compare")
    manifest = new_manifest(args, argv, args.env, env_kwargs, figures, {label: [] for label in trainers})
    out_dir = new_run_dir(args.log_dir, "compare", args.env)
    jobs = [(label, seed) for seed in range(args.seeds) for label in trainers]
    for k, (label, seed) in enumerate(jobs, 1):
        note(f"[run {k}/{len(jobs)}] {label}, seed {seed}")
        run_dir = train.main([*flags[label], "--seed", str(seed), "--log-dir", str(out_dir / "runs")])
        manifest["runs"][label].append(str(run_dir))
        save_manifest(out_dir, manifest)  # after every run: an interrupted compare can be re-plotted
    return write_outputs(out_dir, manifest, args.video, progress=not args.no_progress)


if __name__ == "__main__":
    sys.exit(run_cli(main))
