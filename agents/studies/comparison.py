"""Comparisons of trained agents, as agents.compare draws them: each final model scored by its env's
yardsticks, every run's evaluation curve read, and the outputs written (curves.png, report.md,
curves.csv, profiles.png, manifest.json, a video of the best final model), every figure over seeds
an IQM with its bootstrap interval (:mod:`agents.studies.intervals`). See :mod:`agents.compare` for
the command line.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import numpy as np

from agents.artifacts.figures import pyplot, save_png
from agents.artifacts.models import load_run_model
from agents.artifacts.runs import (
    EVALUATIONS,
    FINAL_MODEL,
    SUMMARY_NAME,
    atomic_path,
    model_file,
    read_config,
    read_summary,
)
from agents.artifacts.video import write_video
from agents.common.configuration.registry import MODEL_SUFFIXES
from agents.common.errors import UsageError
from agents.common.readers import count, csv_number, csv_rows, finite, npz_arrays, parse_json, read_text
from agents.session.console import Ticking
from agents.session.evaluation import evaluate
from agents.session.tracking import render_fps
from agents.studies.intervals import iqm_curve, iqm_interval, plot_performance_profiles
from ballenvs.reference import SCORE_SEED, reference_for

MANIFEST = "manifest.json"
MAX_SCORE_EPISODES = 100_000
_MANIFEST_KEYS: tuple[str, ...] = (
    "env_id",
    "env_kwargs",
    "timesteps",
    "seeds",
    "eval_freq",
    "eval_episodes",
    "hardware",
    "command",
)
_MANIFEST_KEYS += ("baselines", "heuristic", "runs", "score_episodes")


# -- scoring final models ------------------------------------------------------------------------


def score(run_dir: Path, env_id: str, episodes: int) -> dict[str, tuple[float, float]]:
    """A run's final model on each of the env's yardsticks: (value, standard error)."""
    model_path = model_file(run_dir, FINAL_MODEL, MODEL_SUFFIXES)
    if model_path is None:
        raise UsageError(f"no {FINAL_MODEL} in {str(run_dir)!r}: did the run finish?")
    model, config = load_run_model(model_path, run_dir, "cpu")
    env_kwargs = dict(config["hyperparams"].get("env_kwargs") or {})
    scores = {}
    for yardstick in reference_for(env_id).yardsticks:
        result = evaluate(model, config, episodes, SCORE_SEED, deterministic=True, env_overrides=dict(yardstick.env_overrides))
        scores[yardstick.name] = yardstick.score(result.episodes, env_id, {**env_kwargs, **yardstick.env_overrides})
    return scores


# -- reading run folders ------------------------------------------------------------------------


def read_evaluations(run_dir: Path) -> dict[str, np.ndarray]:
    """A run's ``evaluations.npz``, checked: evaluation steps (ints, rising) and a row of
    finite returns for each."""
    path = run_dir / EVALUATIONS
    what = f"evaluations {str(path)!r}"
    data = npz_arrays(path, "evaluations", ("timesteps", "results"))
    timesteps, results = data["timesteps"], data["results"]
    if timesteps.ndim != 1 or not len(timesteps) or timesteps.dtype.kind not in "iu":
        raise UsageError(f"{what}: timesteps must be a list of evaluation steps, got {timesteps.dtype} {timesteps.shape}")
    if results.ndim != 2 or len(results) != len(timesteps) or results.dtype.kind not in "iuf":
        raise UsageError(f"{what}: results must hold one row of returns per evaluation, got {results.dtype} {results.shape}")
    if not np.isfinite(results).all() or (np.diff(timesteps) <= 0).any():
        raise UsageError(f"{what}: returns must be finite and evaluation steps rising")
    return data


def run_curve(run_dir: Path) -> dict[str, Any]:
    """Evaluation timesteps, mean returns, and the wall-clock seconds of each evaluation."""
    if not (run_dir / EVALUATIONS).is_file() or not (run_dir / SUMMARY_NAME).is_file():
        raise UsageError(f"run {str(run_dir)!r} has no evaluations or did not finish: compare needs finished, evaluated runs")
    data = read_evaluations(run_dir)
    timesteps, returns = data["timesteps"], data["results"].mean(axis=1)
    steps_at, seconds_at = [], []
    progress = run_dir / "progress.csv"
    for row in csv_rows(progress, "progress file"):
        if row.get("time/time_elapsed") and row.get("time/total_timesteps"):
            steps_at.append(csv_number(row, "time/total_timesteps", repr(str(progress))))
            seconds_at.append(csv_number(row, "time/time_elapsed", repr(str(progress))))
    summary = read_summary(run_dir)
    # The last point: the end of training, from the trainer's own summary.
    steps_at.append(summary["total_steps"])
    seconds_at.append(summary["seconds"])
    order = np.argsort(steps_at)
    seconds = np.interp(timesteps, np.asarray(steps_at)[order], np.asarray(seconds_at)[order])
    rate = summary["steps"] / summary["seconds"] if summary["seconds"] > 0 else float("nan")
    return {"timesteps": timesteps, "returns": returns, "seconds": seconds, "steps_per_s": rate}


# -- analysis and output --------------------------------------------------------------------------


def analyse(manifest: dict[str, Any], progress: bool = True) -> dict[str, Any]:
    """Every agent's curves, final models scored on the env's yardsticks and their intervals; its
    progress shown over the final models scored (``progress=False``: not shown)."""
    target = manifest["baselines"][manifest["heuristic"]]
    agents = {}
    with Ticking(sum(len(dirs) for dirs in manifest["runs"].values()), "final model", progress) as shown:
        for label, run_dirs in manifest["runs"].items():
            if not run_dirs:
                continue
            curves = [run_curve(Path(d)) for d in run_dirs]
            finals = np.array([c["returns"][-1] for c in curves])
            reached = []
            for c in curves:
                hit = np.flatnonzero(c["returns"] >= target)
                reached.append((float(c["timesteps"][hit[0]]), float(c["seconds"][hit[0]])) if len(hit) else None)
            per_run = []
            for run_dir in run_dirs:
                per_run.append(score(Path(run_dir), manifest["env_id"], manifest["score_episodes"]))
                shown.result()
            scores = {name: iqm_interval([s[name][0] for s in per_run]) for name in per_run[0]}
            agents[label] = {
                "curves": curves,
                "finals": finals.tolist(),
                "final": iqm_interval(finals.tolist()),
                "steps_per_s": float(np.mean([c["steps_per_s"] for c in curves])),
                "reached": reached,
                "scores": scores,
                "score_errors": {name: [s[name][1] for s in per_run] for name in per_run[0]},
            }
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


def _band(curves: list[dict[str, np.ndarray]], x_key: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The IQM over seeds and its 95% interval, on the first seed's x values."""
    x = curves[0][x_key]
    ys = np.array([np.interp(x, c[x_key], c["returns"]) for c in curves])
    return (x, *iqm_curve(ys))


def plot(path: Path, agents: dict[str, Any], manifest: dict[str, Any]) -> None:
    """``curves.png``: :func:`curves_figure`."""
    save_png(curves_figure(agents, manifest), path)


def plot_profiles(path: Path, agents: dict[str, Any], manifest: dict[str, Any]) -> None:
    """``profiles.png``: :func:`profiles_figure`."""
    save_png(profiles_figure(agents, manifest), path)


def curves_figure(agents: dict[str, Any], manifest: dict[str, Any]) -> Any:
    """Each agent's evaluation return against env steps and against wall-clock time: its IQM over
    seeds as a line, the 95% interval as a band of the line's colour; the baselines dashed."""
    fig, axes = pyplot().subplots(1, 2, figsize=(13, 5), sharey=True)
    for ax, (x_key, x_label) in zip(axes, [("timesteps", "env steps"), ("seconds", "wall-clock time (s)")]):
        for label, agent in agents.items():
            x, iqm, low, high = _band(agent["curves"], x_key)
            (line,) = ax.plot(x, iqm, label=f"{label} ({_count(len(agent['curves']), 'seed')})", linewidth=2)
            ax.fill_between(x, low, high, color=line.get_color(), alpha=0.2)
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
    several = any(len(agent["curves"]) > 1 for agent in agents.values())
    spread = "IQM and its 95% bootstrap interval over seeds" if several else "one seed"
    fig.suptitle(f"{manifest['env_id']}: {' vs '.join(agents)}, {spread}; dashed: baselines\n{manifest['hardware']}")
    fig.tight_layout()
    return fig


def profiles_figure(agents: dict[str, Any], manifest: dict[str, Any]) -> Any:
    """rliable's performance profile of the final evaluation returns: for each return, the share of
    each agent's runs that ended above it, with its 95% bootstrap band."""
    fig, ax = pyplot().subplots(figsize=(7, 4.5))
    plot_performance_profiles(ax, {label: agent["finals"] for label, agent in agents.items()}, "final evaluation return")
    # rliable labels each agent's line with its name: the legend's entries are those lines, not the bands drawn between them.
    lines = {line.get_label(): line for line in ax.get_lines()}
    labels = [f"{label} ({_count(len(agent['finals']), 'run')})" for label, agent in agents.items()]
    ax.legend([lines[label] for label in agents], labels, loc="lower left")
    ax.set_title(f"{manifest['env_id']}: performance profiles of the final models", fontsize=11)
    fig.tight_layout()
    return fig


def report(agents: dict[str, Any], manifest: dict[str, Any]) -> str:
    heuristic, target = manifest["heuristic"], manifest["baselines"][manifest["heuristic"]]
    seeds = ", ".join(map(str, range(manifest["seeds"])))
    lines = [
        f"# {manifest['env_id']}: {' vs '.join(agents)}",
        "",
        f"{_per_agent(manifest['timesteps'])} env steps per run, seeds {seeds}, "
        f"evaluation every {_per_agent(manifest['eval_freq'])} steps on {manifest['eval_episodes']} episodes; "
        f"{manifest['hardware']}.",
        f"Command: `{manifest['command']}`",
        "",
        f"| agent | final evaluation return (IQM [95% CI] over seeds) | steps/s | reached {heuristic} ({target:.3f}) at |",
        "|---|---:|---:|---|",
    ]
    for label, agent in agents.items():
        hits = [r for r in agent["reached"] if r is not None]
        if hits:
            seconds, steps = [h[1] for h in hits], [h[0] for h in hits]
            reached = (
                f"{np.mean(seconds):.0f} s ({min(seconds):.0f}-{max(seconds):.0f}), {np.mean(steps):,.0f} steps "
                f"({len(hits)}/{_count(len(agent['reached']), 'seed')})"
            )
        else:
            reached = "not reached"
        lines.append(f"| {label} | {agent['final'].format()} | {agent['steps_per_s']:.0f} | {reached} |")
    baselines = ", ".join(f"{k} {v:.3f}" for k, v in manifest["baselines"].items())
    lines += ["", f"Baselines (mean return of seeded episodes of the same env and options): {baselines}", ""]
    yardsticks = {y.name: y for y in reference_for(manifest["env_id"]).yardsticks}
    names = list(next(iter(agents.values()))["scores"]) if agents else []
    lines += [
        f"Final models on the env's yardsticks ({manifest['score_episodes']} episodes each, seeded from {SCORE_SEED}; "
        "the IQM over seeds with its 95% stratified bootstrap interval (rliable), and in brackets each seed's "
        "standard error):",
        "",
        "| agent | " + " | ".join(names) + " |",
        "|---|" + "---:|" * len(names),
    ]
    for label, agent in agents.items():
        cells = []
        for name in names:
            form = ".0%" if yardsticks[name].percent else "+.3f"
            errors = ", ".join(format(e, form.lstrip("+")) for e in agent["score_errors"][name])
            cells.append(f"{agent['scores'][name].format(form)} ({errors})")
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def write_outputs(
    out_dir: Path,
    manifest: dict[str, Any],
    video: str | None = None,
    agents: dict[str, Any] | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """The curves, the report and (given ``video``) a film of the best agent; ``agents``: the
    manifest's analysis when the caller already made it (else made here, showing ``progress``)."""
    agents = analyse(manifest, progress) if agents is None else agents
    write_csv(out_dir / "curves.csv", agents, manifest)
    plot(out_dir / "curves.png", agents, manifest)
    if agents:
        plot_profiles(out_dir / "profiles.png", agents, manifest)
    text = report(agents, manifest)
    with atomic_path(out_dir / "report.md") as tmp:
        tmp.write_text(text)
    print(text)
    print(f"wrote {out_dir / 'curves.png'}, {out_dir / 'profiles.png'}, {out_dir / 'report.md'}, {out_dir / 'curves.csv'}")
    if video is not None and agents:
        best = max(agents, key=lambda label: agents[label]["final"].iqm)
        path = write_video(video, film_final_model(Path(manifest["runs"][best][0])), render_fps(manifest["env_id"]))
        print(f"wrote {path}: {best}, seed 0, final model")
    return agents


def film_final_model(run_dir: Path) -> list:
    """One episode of a run's final model, as pictures."""
    model_path = model_file(run_dir, FINAL_MODEL, MODEL_SUFFIXES)
    if model_path is None:
        raise UsageError(f"--video: run {str(run_dir)!r} has no {FINAL_MODEL} to film")
    config = read_config(run_dir)
    frames: list = []
    evaluate(
        load_run_model(model_path, run_dir, "cpu")[0],
        config,
        1,
        SCORE_SEED,
        env_overrides={"render_mode": "rgb_array"},
        frames=frames,
    )
    return frames


def save_manifest(out_dir: Path, manifest: dict[str, Any]) -> None:
    with atomic_path(out_dir / MANIFEST) as tmp:
        tmp.write_text(json.dumps(manifest, indent=2))


def read_manifest(folder: str) -> dict[str, Any]:
    path = Path(folder) / MANIFEST
    if not path.is_file():
        raise UsageError(f"--from-runs {folder!r}: no {MANIFEST} there (not a compare folder?)")
    manifest = parse_json(read_text(path, "manifest"), f"--from-runs manifest {str(path)!r}")
    missing = [key for key in _MANIFEST_KEYS if not isinstance(manifest, dict) or key not in manifest]
    if missing:
        raise UsageError(f"--from-runs {folder!r}: {MANIFEST} is not a compare manifest (it lacks {', '.join(missing)})")
    runs = manifest["runs"]
    if not isinstance(runs, dict) or not all(
        isinstance(d, list) and all(isinstance(r, str) for r in d) for d in runs.values()
    ):
        raise UsageError(f"--from-runs {folder!r}: its runs must map each agent to a list of run folders")
    what = f"--from-runs {folder!r}: its"
    count(manifest["score_episodes"], f"{what} score_episodes", 1, MAX_SCORE_EPISODES)
    try:
        reference_for(manifest["env_id"])
    except (ValueError, TypeError):
        raise UsageError(f"{what} env_id {manifest['env_id']!r:.80} is none of the envs a comparison scores") from None
    baselines = manifest["baselines"]
    if not isinstance(baselines, dict) or not all(isinstance(name, str) for name in baselines):
        raise UsageError(f"{what} baselines must map each reference player to its mean return")
    for name, value in baselines.items():
        finite(value, f"{what} baseline {name}")
    if manifest["heuristic"] not in baselines:
        raise UsageError(f"{what} heuristic {manifest['heuristic']!r:.80} is none of its baselines ({', '.join(baselines)})")
    for key in ("timesteps", "eval_freq"):  # one count, or one per agent
        values = manifest[key] if isinstance(manifest[key], dict) else {"": manifest[key]}
        for value in values.values():
            count(value, f"{what} {key}", 1)
    return manifest


def evaluation_schedule(runs: dict[str, list[str]]) -> dict[str, Any]:
    """Steps between evaluations (per agent) and episodes per evaluation, read from the runs'
    ``evaluations.npz`` (the first evaluation is one interval in)."""
    eval_freq, eval_episodes = {}, 0
    for label, dirs in runs.items():
        data = read_evaluations(Path(dirs[0]))
        eval_freq[label], eval_episodes = int(data["timesteps"][0]), int(data["results"].shape[1])
    return {"eval_freq": eval_freq, "eval_episodes": eval_episodes}


def _per_agent(value: Any) -> str:
    """A manifest figure that is one number, or one per agent."""
    if isinstance(value, dict):
        return ", ".join(f"{v:,} ({label})" if isinstance(v, int) else f"{v} ({label})" for label, v in value.items())
    return f"{value:,}" if isinstance(value, int) else str(value)


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"
