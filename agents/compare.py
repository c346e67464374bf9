"""Train stable-baselines3's DQN and our custom DQN side by side and compare them.

    python -m agents.compare --env UAVGrid-v0 --timesteps 100000 --seeds 3 [--n-envs K]
    python -m agents.compare --from-runs runs/compare/UAVGrid-v0_1      # re-plot, no training

Both trainers run with the same config section, seeds, evaluation schedule and evaluation
episodes (the same seeded eval env). Baselines are played on seeded episodes of the same env
and options: the random policy and the env's heuristic (GreedyPolicy on UAVGrid; the
built-in players against the training opponent on BallDuel). On UAVGrid each run's final
model and the greedy policy also play the same seeded episodes, for a paired comparison.
Output in runs/compare/<env>_<n>/: curves.png, report.md, curves.csv, and manifest.json
naming the trainers' run folders (under runs/compare/<env>_<n>/runs/).
"""

from __future__ import annotations

import argparse
import csv
import importlib
import json
import sys
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from agents.cli import DEVICES, run_cli
from agents.config import DEFAULT_CONFIG
from agents.envs import VEC_ENVS, check_env_id
from agents.evaluate import evaluate, find_model, load_model, model_file
from agents.hardware import machine
from agents.runs import FINAL_MODEL, atomic_path, new_run_dir, read_config
from agents.training import SUMMARY_NAME

#: label -> (trainer module, its algo name in run folders)
TRAINERS = {"SB3 DQN": "agents.sb3_train", "custom DQN": "agents.custom_train"}
BALLDUEL_PLAYERS = ("random", "still", "chaser", "pusher")
MANIFEST = "manifest.json"
EVAL_BASE_SEED = 20_000  # win-rate games: seeds unused by training and its evaluations


# -- baselines -------------------------------------------------------------------------------


# Enough episodes that the baselines' means are steady: BallDuel games are played 100 at
# once; UAV episodes are 300 steps each, one after the other.
BALLDUEL_BASELINE_GAMES = 100
UAV_BASELINE_EPISODES = 20
# Each UAV run's final model and the heuristic also play these same seeded episodes: paired,
# the comparison is far less noisy than the evaluation curve's against the baseline's mean.
UAV_PAIRED_EPISODES = 100


def baselines(env_id: str, env_kwargs: dict[str, Any]) -> tuple[dict[str, float], str]:
    """Mean return of the reference policies, and the name of the heuristic among them."""
    if env_id == "BallDuel-v0":
        from ballenvs.duel.match import play_matches

        opponent = env_kwargs.get("opponent", "chaser")
        options = {k: v for k, v in env_kwargs.items() if k in ("max_episode_steps",)}
        returns = {}
        for player in BALLDUEL_PLAYERS:
            rates = play_matches(player, opponent, games=BALLDUEL_BASELINE_GAMES, seed=0, **options)
            returns[player] = rates["left_wins"] - rates["right_wins"]  # +1 a win, -1 a loss
        return returns, "pusher"
    from ballenvs.uav.baselines import episode_returns

    kwargs = _uav_kwargs(env_id, env_kwargs)
    return {
        policy: float(episode_returns(policy, UAV_BASELINE_EPISODES, **kwargs).mean()) for policy in ("random", "greedy")
    }, "greedy"


def _uav_kwargs(env_id: str, env_kwargs: dict[str, Any]) -> dict[str, Any]:
    """UAVGrid-v0 options that make the env ``env_id`` is."""
    return {**env_kwargs, "obs_type": "image"} if env_id == "UAVGridImage-v0" else dict(env_kwargs)


def paired_with_greedy(run_dirs: list[str], env_id: str) -> tuple[float, float] | None:
    """Final models' return minus the greedy policy's on the same seeded episodes: mean and
    standard error over all runs' episodes (None when the models need stacked frames)."""
    from ballenvs.uav.baselines import episode_returns

    config = read_config(Path(run_dirs[0]))
    if config["hyperparams"].get("frame_stack"):
        return None
    kwargs = _uav_kwargs(env_id, config["hyperparams"].get("env_kwargs", {}))
    greedy = episode_returns("greedy", UAV_PAIRED_EPISODES, **kwargs)
    differences = []
    for run_dir in run_dirs:
        model = load_model(config["algo"], final_model(Path(run_dir)), "cpu")

        def act(observation: Any, model: Any = model) -> int:
            batch = {k: v[None] for k, v in observation.items()} if isinstance(observation, dict) else observation[None]
            return int(np.asarray(model.predict(batch, deterministic=True)[0]).reshape(-1)[0])

        differences.append(episode_returns(act, UAV_PAIRED_EPISODES, **kwargs) - greedy)
    pooled = np.concatenate(differences)
    return float(pooled.mean()), float(pooled.std() / np.sqrt(len(pooled)))


def final_model(run_dir: Path) -> Path:
    found = model_file(run_dir, FINAL_MODEL)
    if found is None:
        raise FileNotFoundError(f"no {FINAL_MODEL} in {str(run_dir)!r}: did the run finish?")
    return found


# -- reading run folders ------------------------------------------------------------------------


def run_curve(run_dir: Path) -> dict[str, np.ndarray]:
    """Evaluation timesteps, mean returns, and the wall-clock seconds of each evaluation."""
    data = np.load(run_dir / "eval" / "evaluations.npz")
    timesteps, returns = data["timesteps"], data["results"].mean(axis=1)
    steps_at, seconds_at = [], []
    with open(run_dir / "progress.csv") as file:
        for row in csv.DictReader(file):
            if row.get("time/time_elapsed") and row.get("time/total_timesteps"):
                steps_at.append(float(row["time/total_timesteps"]))
                seconds_at.append(float(row["time/time_elapsed"]))
    summary = yaml.safe_load((run_dir / SUMMARY_NAME).read_text())
    # The last point: the end of training, from the trainer's own summary.
    steps_at.append(summary["total_steps"])
    seconds_at.append(summary["seconds"])
    order = np.argsort(steps_at)
    seconds = np.interp(timesteps, np.asarray(steps_at)[order], np.asarray(seconds_at)[order])
    return {"timesteps": timesteps, "returns": returns, "seconds": seconds, "steps_per_s": summary["steps_per_s"]}


def win_rates(run_dir: Path, episodes: int) -> dict[str, float]:
    model_path, _ = find_model(run_dir)
    config = read_config(run_dir)
    model = load_model(config["algo"], model_path, "cpu")
    rates = {}
    for opponent in BALLDUEL_PLAYERS:
        result = evaluate(
            model, config, episodes, seed=EVAL_BASE_SEED, deterministic=True, env_overrides={"opponent": opponent}
        )
        rates[opponent] = result.outcomes["left"] / episodes
    return rates


# -- analysis and output --------------------------------------------------------------------------


def analyse(manifest: dict[str, Any]) -> dict[str, Any]:
    heuristic = manifest["heuristic"]
    target = manifest["baselines"][heuristic]
    agents = {}
    for label, run_dirs in manifest["runs"].items():
        curves = [run_curve(Path(d)) for d in run_dirs]
        finals = np.array([c["returns"][-1] for c in curves])
        reached = []
        for c in curves:
            hit = np.flatnonzero(c["returns"] >= target)
            reached.append((float(c["timesteps"][hit[0]]), float(c["seconds"][hit[0]])) if len(hit) else None)
        agent = {
            "curves": curves,
            "final_mean": float(finals.mean()),
            "final_std": float(finals.std()),
            "steps_per_s": float(np.mean([c["steps_per_s"] for c in curves])),
            "reached": reached,
        }
        if manifest["env_id"] == "BallDuel-v0":
            per_run = [win_rates(Path(d), manifest["eval_episodes"]) for d in run_dirs]
            agent["win_rates"] = {o: float(np.mean([r[o] for r in per_run])) for o in BALLDUEL_PLAYERS}
        else:
            agent["paired"] = paired_with_greedy(run_dirs, manifest["env_id"])
        agents[label] = agent
    return agents


def write_csv(path: Path, agents: dict[str, Any], manifest: dict[str, Any]) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["agent", "seed", "timesteps", "wall_seconds", "mean_eval_return"])
        for label, agent in agents.items():
            for seed, curve in enumerate(agent["curves"]):
                for t, s, r in zip(curve["timesteps"], curve["seconds"], curve["returns"]):
                    writer.writerow([label, seed, int(t), round(float(s), 2), round(float(r), 4)])
        for name, value in manifest["baselines"].items():
            writer.writerow([f"baseline: {name}", "", "", "", round(value, 4)])


def _band(curves: list[dict[str, np.ndarray]], x_key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Mean and spread over seeds, on the first seed's x values."""
    x = curves[0][x_key]
    ys = np.array([np.interp(x, c[x_key], c["returns"]) for c in curves])
    return x, ys.mean(axis=0), ys.std(axis=0)


def plot(path: Path, agents: dict[str, Any], manifest: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, (x_key, x_label) in zip(axes, [("timesteps", "env steps"), ("seconds", "wall-clock time (s)")]):
        for label, agent in agents.items():
            x, mean, std = _band(agent["curves"], x_key)
            (line,) = ax.plot(x, mean, label=f"{label} ({_count(len(agent['curves']), 'seed')})", linewidth=2)
            ax.fill_between(x, mean - std, mean + std, color=line.get_color(), alpha=0.2)
        for name, value in manifest["baselines"].items():
            ax.axhline(value, linestyle="--", linewidth=1, color="grey" if name != manifest["heuristic"] else "black")
            ax.annotate(
                name,
                (1.0, value),
                xycoords=("axes fraction", "data"),
                xytext=(-4, 3),
                textcoords="offset points",
                ha="right",
                fontsize=9,
            )
        ax.set_xlabel(x_label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"mean evaluation return ({manifest['eval_episodes']} episodes)")
    axes[0].legend(loc="upper left")
    fig.suptitle(
        f"{manifest['env_id']}: SB3 DQN vs custom DQN, mean +- std over seeds; dashed: baselines\n{manifest['hardware']}"
    )
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


def report(agents: dict[str, Any], manifest: dict[str, Any]) -> str:
    heuristic, target = manifest["heuristic"], manifest["baselines"][manifest["heuristic"]]
    lines = [
        f"# {manifest['env_id']}: SB3 DQN vs custom DQN",
        "",
        f"{manifest['timesteps']} env steps per run, seeds {', '.join(map(str, range(manifest['seeds'])))}, "
        f"evaluation every {manifest['eval_freq']} steps on {manifest['eval_episodes']} episodes; {manifest['hardware']}.",
        f"Command: `{manifest['command']}`",
        "",
        "| agent | final return (mean +- std over seeds) | steps/s | reached " + heuristic + f" ({target:.3f}) at |",
        "|---|---:|---:|---|",
    ]
    for label, agent in agents.items():
        hits = [r for r in agent["reached"] if r is not None]
        if hits:
            seconds, steps = np.mean([h[1] for h in hits]), np.mean([h[0] for h in hits])
            reached = f"{seconds:.0f} s, {steps:.0f} steps ({len(hits)}/{_count(len(agent['reached']), 'seed')})"
        else:
            reached = "not reached"
        lines.append(
            f"| {label} | {agent['final_mean']:.3f} +- {agent['final_std']:.3f} | {agent['steps_per_s']:.0f} | {reached} |"
        )
    lines += [
        "",
        "Baselines (mean return of seeded episodes of the same env and options): "
        + ", ".join(f"{k} {v:.3f}" for k, v in manifest["baselines"].items()),
    ]
    if manifest["env_id"] != "BallDuel-v0":
        lines += [
            "",
            f"Final model's return minus {heuristic}'s on the same {UAV_PAIRED_EPISODES} seeded episodes "
            "(paired; all seeds' episodes pooled):",
            "",
        ]
        for label, agent in agents.items():
            paired = agent["paired"]
            lines.append(
                f"- {label}: "
                + ("n/a (stacked frames)" if paired is None else f"{paired[0]:+.2f} +- {paired[1]:.2f} (standard error)")
            )
    if manifest["env_id"] == "BallDuel-v0":
        lines += [
            "",
            "Win rate of the best model (the final one if no evaluation ran) against each built-in opponent:",
            "",
            "| agent | " + " | ".join(BALLDUEL_PLAYERS) + " |",
            "|---|" + "---:|" * len(BALLDUEL_PLAYERS),
        ]
        for label, agent in agents.items():
            lines.append(f"| {label} | " + " | ".join(f"{agent['win_rates'][o]:.0%}" for o in BALLDUEL_PLAYERS) + " |")
    return "\n".join(lines) + "\n"


def write_outputs(out_dir: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    agents = analyse(manifest)
    write_csv(out_dir / "curves.csv", agents, manifest)
    plot(out_dir / "curves.png", agents, manifest)
    text = report(agents, manifest)
    with atomic_path(out_dir / "report.md") as tmp:
        tmp.write_text(text)
    print(text)
    print(f"wrote {out_dir / 'curves.png'}, {out_dir / 'report.md'}, {out_dir / 'curves.csv'}")
    return agents


def save_manifest(out_dir: Path, manifest: dict[str, Any]) -> None:
    with atomic_path(out_dir / MANIFEST) as tmp:
        tmp.write_text(json.dumps(manifest, indent=2))


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(
        prog="python -m agents.compare",
        description=__doc__.split("\n\n")[0].strip(),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--env", default="UAVGrid-v0")
    parser.add_argument("--timesteps", type=int, default=100_000, help="env steps per run")
    parser.add_argument("--seeds", type=int, default=3, help="runs per agent, seeded 0, 1, ...")
    parser.add_argument("--n-envs", type=int, default=None, help="parallel envs (default: the config's)")
    parser.add_argument("--vec-env", choices=VEC_ENVS, default="native")
    parser.add_argument("--eval-freq", type=int, default=None, help="env steps between evaluations (default: timesteps / 20)")
    parser.add_argument("--eval-episodes", type=int, default=10)
    parser.add_argument("--config", default=str(DEFAULT_CONFIG))
    parser.add_argument("--hyperparams", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument("--env-kwargs", nargs="*", default=[], metavar="KEY=VALUE")
    parser.add_argument("--device", choices=DEVICES, default="auto")
    parser.add_argument("--log-dir", default="runs")
    parser.add_argument(
        "--from-runs", default=None, metavar="COMPARE_DIR", help="re-plot an earlier compare folder without training"
    )
    args = parser.parse_args(argv)

    if args.from_runs:
        out_dir = Path(args.from_runs)
        try:
            manifest = json.loads((out_dir / MANIFEST).read_text())
        except OSError:
            raise FileNotFoundError(f"--from-runs {args.from_runs!r}: no {MANIFEST} there (not a compare folder?)") from None
        return write_outputs(out_dir, manifest)

    check_env_id(args.env)
    for flag in ("timesteps", "seeds", "eval_episodes"):
        if getattr(args, flag) < 1:
            raise ValueError(f"--{flag.replace('_', '-')} must be >= 1, got {getattr(args, flag)}")
    eval_freq = args.eval_freq or max(args.timesteps // 20, 1)
    from agents.config import parse_overrides

    env_kwargs = parse_overrides(args.env_kwargs, "--env-kwargs")
    common = [
        "--env",
        args.env,
        "--timesteps",
        str(args.timesteps),
        "--vec-env",
        args.vec_env,
        "--config",
        args.config,
        "--device",
        args.device,
    ]
    common += ["--eval-freq", str(eval_freq), "--eval-episodes", str(args.eval_episodes), "--save-freq", "0", "--no-progress"]
    common += [
        *(["--n-envs", str(args.n_envs)] if args.n_envs else []),
        "--hyperparams",
        *args.hyperparams,
        "--env-kwargs",
        *args.env_kwargs,
    ]
    out_dir = new_run_dir(args.log_dir, "compare", args.env)
    baseline_returns, heuristic = baselines(args.env, env_kwargs)
    manifest: dict[str, Any] = {
        "env_id": args.env,
        "timesteps": args.timesteps,
        "seeds": args.seeds,
        "eval_freq": eval_freq,
        "eval_episodes": args.eval_episodes,
        "hardware": machine(),
        "command": "python -m agents.compare " + " ".join(argv if argv is not None else sys.argv[1:]),
        "baselines": baseline_returns,
        "heuristic": heuristic,
        "runs": {label: [] for label in TRAINERS},
    }
    jobs = [(label, seed) for seed in range(args.seeds) for label in TRAINERS]
    for k, (label, seed) in enumerate(jobs, 1):
        print(f"[run {k}/{len(jobs)}] {label}, seed {seed}", flush=True)
        trainer = importlib.import_module(TRAINERS[label])
        run_dir = trainer.main([*common, "--seed", str(seed), "--log-dir", str(out_dir / "runs")])
        manifest["runs"][label].append(str(run_dir))
        save_manifest(out_dir, manifest)  # after every run: an interrupted compare can be re-plotted
    return write_outputs(out_dir, manifest)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


if __name__ == "__main__":
    sys.exit(run_cli(main))
