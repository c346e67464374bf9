"""A round robin of BallDuel players with Elo ratings: how good is each snapshot, each run, each script?

    python -m agents.league runs/custom/BallDuel-v0_3 runs/dqn/BallDuel-v0_1/final_model.zip chaser pusher
    python -m agents.league PLAYER... [--games 100] [--seed 0] [--log-dir runs/league]

A player is a built-in one (still, random, chaser, pusher), a model file (a final, best or
interrupted model, a checkpoint, a self-play snapshot), or a run folder: all its self-play
snapshots and its final model, each a player of its own. Every pair plays ``--games`` games,
half with each on the left (the games are seeded and both sides see them alike, so the sides
are equal). Each model plays as it was trained to see the game: its own observation type and
frame stack. Elo ratings are fitted to all results by maximum likelihood (a win scores 1, a
draw or a time-out 1/2; the mean rating is 1000), with a standard error from a bootstrap over
the games. Output in ``<log-dir>/league_<n>/``: ``league.csv`` (players and ratings),
``results.csv`` (every pair), ``report.md`` and ``elo.png`` (each run's snapshots' rating
against their training step; the built-in players as lines).
"""

from __future__ import annotations

import csv
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from agents.cli import DEVICES, MAX_SEED, Parser, resolve_device, run_cli
from agents.errors import UsageError
from agents.models import MODEL_SUFFIXES, find_model, load_policy
from agents.runs import BEST_MODEL, FINAL_MODEL, INTERRUPTED_MODEL, atomic_path, model_file, new_run_dir, read_config
from agents.selfplay import SNAPSHOTS, QPlayer, load_snapshot_policy
from ballenvs.duel.game import TwoPlayerDuel
from ballenvs.duel.match import play_pairs
from ballenvs.duel.observe import make_observer
from ballenvs.duel.opponents import BUILTIN_OPPONENTS, make_player

ELO_SCALE = 400.0
MEAN_RATING = 1000.0
BOOTSTRAP = 200
_STEPS = re.compile(r"_(\d+)_steps")


@dataclass
class Entrant:
    """One player of the league: its name, how to make it play, and where it comes from."""

    name: str
    spec: Any  # a built-in name, or (model path, run folder)
    run: str = ""  # the run folder of a model
    steps: int | None = None  # its training step, for snapshots and final models


def model_entrant(path: str | Path, names: tuple[str, ...] = (FINAL_MODEL, BEST_MODEL, INTERRUPTED_MODEL)) -> Entrant:
    """One model as a player: a model file, a self-play snapshot, or a run folder's first of ``names``."""
    path = Path(path)
    if path.is_file() and path.parent.name == SNAPSHOTS:
        run = _run_name(path.parent.parent)
        return Entrant(f"{run}@{_steps_of(path)}", (path, path.parent.parent), run, _steps_of(path))
    model, run_dir = find_model(path, names)
    run = _run_name(run_dir)
    return Entrant(f"{run}/{model.stem}", (model, run_dir), run, _steps_of(model))


def entrants_of(argument: str) -> list[Entrant]:
    """The players one command-line argument names: a run folder with snapshots gives each
    snapshot and its final model."""
    if argument in BUILTIN_OPPONENTS:
        return [Entrant(argument, argument)]
    path = Path(argument)
    if not path.exists():
        raise UsageError(
            f"player {argument!r}: not a built-in player ({', '.join(BUILTIN_OPPONENTS)}), a model file or a run folder"
        )
    if not (path.is_dir() and (path / SNAPSHOTS).is_dir()):
        return [model_entrant(path)]
    run = _run_name(path)
    found = [
        Entrant(f"{run}@{_steps_of(snapshot)}", (snapshot, path), run, _steps_of(snapshot))
        for snapshot in sorted((path / SNAPSHOTS).glob("snapshot_*_steps.pt"), key=_steps_of)
    ]
    final = model_file(path, FINAL_MODEL, MODEL_SUFFIXES)
    if final is not None:
        found.append(Entrant(f"{run}@final", (final, path), run, _final_steps(path, read_config(path).get("timesteps"))))
    return found


def entrants(arguments: list[str]) -> list[Entrant]:
    """The players named on the command line, each different, at least two."""
    found = [entrant for argument in arguments for entrant in entrants_of(argument)]
    names = [e.name for e in found]
    if len(set(names)) != len(names):
        raise UsageError(f"players must differ; named twice: {sorted({n for n in names if names.count(n) > 1})}")
    if len(found) < 2:
        raise UsageError(f"a league needs at least two players, got {names}")
    return found


def _run_name(run_dir: Path) -> str:
    """A run as <algo>/<env>_<n>: runs of different trainers share folder names."""
    return f"{run_dir.parent.name}/{run_dir.name}"


def _steps_of(path: Path) -> int | None:
    match = _STEPS.search(path.name)
    return int(match.group(1)) if match else None


def _final_steps(run_dir: Path, fallback: Any) -> int | None:
    summary = run_dir / "summary.yml"
    if summary.is_file():
        import yaml

        return int(yaml.safe_load(summary.read_text())["total_steps"])
    return fallback


def make_entrant_player(entrant: Entrant, device: str, physics: Any) -> Any:
    """A :class:`ballenvs.duel.opponents.Player`: a built-in one, or a model that sees the game
    through its own observation settings and frame stack."""
    if isinstance(entrant.spec, str):
        return make_player(entrant.spec, physics)
    model_path, run_dir = entrant.spec
    config = read_config(run_dir)
    if config["env_id"] != "BallDuel-v0":
        raise UsageError(f"player {entrant.name}: a model of {config['env_id']}, not of BallDuel-v0")
    loader = load_snapshot_policy if model_path.parent.name == SNAPSHOTS else load_policy
    policy, config = loader(model_path, run_dir, device)
    hyper = config["hyperparams"]
    options = dict(hyper.get("env_kwargs") or {})
    observer, _ = make_observer(physics, options.get("obs_type", "pixels"), options.get("obs_size", 64))
    return QPlayer(policy.q_net, device, hyper.get("frame_stack") or 1, observer)


# -- Elo ------------------------------------------------------------------------------------------


def fit_elo(scores: np.ndarray, games: np.ndarray, iterations: int = 2000) -> np.ndarray:
    """Ratings that make the observed scores most likely. ``scores[i, j]``: what i scored
    against j (wins + draws / 2), ``games[i, j]``: how many they played. The expected score of
    i against j is 1 / (1 + 10 ** ((r_j - r_i) / 400)); the ratings average 1000.

    Fitted with the minorization-maximization updates of the Bradley-Terry model (Hunter,
    2004); a player who won or lost every game gets a finite rating from a prior of one drawn
    game against a player rated 1000, which keeps every rating defined."""
    n = len(scores)
    prior = 1.0  # one virtual draw against an average player, in strengths: half a win, half a loss
    strength = np.ones(n)
    total = scores.sum(axis=1) + prior / 2
    for _ in range(iterations):
        pair = games / (strength[:, None] + strength[None, :])
        np.fill_diagonal(pair, 0.0)
        updated = total / (pair.sum(axis=1) + prior / (strength + 1.0))
        updated /= np.exp(np.log(updated).mean())
        if np.allclose(updated, strength, rtol=1e-12, atol=0):
            strength = updated
            break
        strength = updated
    ratings = ELO_SCALE * np.log10(strength)
    return ratings - ratings.mean() + MEAN_RATING


def bootstrap_elo(results: np.ndarray, rng: np.random.Generator, rounds: int = BOOTSTRAP) -> np.ndarray:
    """The standard deviation of each rating over leagues resampled from the same games.
    ``results[i, j]`` holds i's (wins, draws, losses) against j, for i < j."""
    n = len(results)
    played = [(i, j) for i in range(n) for j in range(i + 1, n) if results[i, j].sum()]
    samples = np.empty((rounds, n))
    for r in range(rounds):
        resampled = np.zeros_like(results)
        for i, j in played:
            total = int(results[i, j].sum())
            resampled[i, j] = rng.multinomial(total, results[i, j] / total)
        samples[r] = fit_elo(*tables(resampled))
    return samples.std(axis=0)


def tables(results: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Scores and games per pair from (wins, draws, losses) triples of i against j, i < j."""
    n = len(results)
    scores, games = np.zeros((n, n)), np.zeros((n, n))
    for i in range(n):
        for j in range(i + 1, n):
            wins, draws, losses = results[i, j]
            scores[i, j], scores[j, i] = wins + draws / 2, losses + draws / 2
            games[i, j] = games[j, i] = wins + draws + losses
    return scores, games


# -- the league -----------------------------------------------------------------------------------


def play_league(players: list[Any], games: int, seed: int, duel_options: dict[str, Any]) -> np.ndarray:
    """Every pair plays ``games`` games, half with each on the left; (wins, draws, losses) of i against j."""
    n = len(players)
    results = np.zeros((n, n, 3), dtype=np.int64)
    for i in range(n):
        for j in range(i + 1, n):
            outcome = play_pairs(players[i], players[j], games, seed + 1000 * i + j, **duel_options)
            results[i, j] = outcome["first_wins"], outcome["draws"], outcome["second_wins"]
    return results


def write_outputs(folder: Path, league: list[Entrant], results: np.ndarray, ratings: np.ndarray, errors: np.ndarray) -> str:
    order = np.argsort(-ratings)
    scores, games = tables(results)
    with atomic_path(folder / "league.csv") as tmp, open(tmp, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["player", "run", "steps", "games", "score", "elo", "elo_std"])
        for k in order:
            e = league[k]
            writer.writerow(
                [
                    e.name,
                    e.run,
                    "" if e.steps is None else e.steps,
                    int(games[k].sum()),
                    scores[k].sum(),
                    round(ratings[k], 1),
                    round(errors[k], 1),
                ]
            )
    with atomic_path(folder / "results.csv") as tmp, open(tmp, "w", newline="") as file:
        writer = csv.writer(file)
        writer.writerow(["player", "opponent", "wins", "draws", "losses"])
        for i in range(len(league)):
            for j in range(i + 1, len(league)):
                writer.writerow([league[i].name, league[j].name, *results[i, j].tolist()])
    lines = ["# League", "", "| rank | player | Elo | +- | games | score |", "|---:|---|---:|---:|---:|---:|"]
    for rank, k in enumerate(order, 1):
        played = int(games[k].sum())
        share = scores[k].sum() / max(played, 1)
        lines.append(f"| {rank} | {league[k].name} | {ratings[k]:.0f} | {errors[k]:.0f} | {played} | {share:.0%} |")
    lines += [
        "",
        "Elo fitted to every game (a win 1, a draw or time-out 1/2), mean 1000; +-: standard deviation over",
        f"{BOOTSTRAP} leagues resampled from the same games. Every pair: results.csv; ratings against training steps:",
        "elo.png.",
        "",
    ]
    text = "\n".join(lines)
    with atomic_path(folder / "report.md") as tmp:
        tmp.write_text(text)
    plot(folder / "elo.png", league, ratings, errors)
    return text


def plot(path: Path, league: list[Entrant], ratings: np.ndarray, errors: np.ndarray) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(9, 5))
    for run in sorted({e.run for e in league if e.run}):
        points = sorted((e.steps, ratings[k], errors[k]) for k, e in enumerate(league) if e.run == run and e.steps is not None)
        if points:
            steps, elo, err = (np.array(column) for column in zip(*points))
            ax.errorbar(steps, elo, yerr=err, marker="o", capsize=3, label=run)
    for k, e in enumerate(league):
        if e.steps is None:  # built-in players, and models of no known step: lines across
            ax.axhline(ratings[k], linestyle="--", linewidth=1, color="grey")
            ax.annotate(
                e.name,
                (1.0, ratings[k]),
                xycoords=("axes fraction", "data"),
                xytext=(-4, 3),
                textcoords="offset points",
                ha="right",
                fontsize=9,
            )
    ax.set_xlabel("training step of the snapshot")
    ax.set_ylabel("Elo (mean 1000)")
    ax.grid(alpha=0.3)
    if any(e.run for e in league):
        ax.legend(loc="lower right")
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> Path:
    parser = Parser(prog="python -m agents.league", description=__doc__.split("\n\n")[0].strip())
    parser.add_argument("players", nargs="+", metavar="PLAYER", help="built-in names, model files or run folders")
    parser.add_argument("--games", type=int, default=100, help="games per pair (even: half from each side)")
    parser.add_argument("--seed", type=int, default=0, help="seeds the games")
    parser.add_argument("--device", choices=DEVICES, default="auto")
    parser.add_argument("--log-dir", default="runs", help="where league folders go (<log-dir>/league/league_<n>)")
    args = parser.parse_args(argv)
    if args.games < 2 or args.games % 2:
        raise UsageError(f"--games must be an even number >= 2 (half from each side), got {args.games}")
    if not 0 <= args.seed <= MAX_SEED:
        raise UsageError(f"--seed must be in 0..{MAX_SEED}, got {args.seed}")
    device = resolve_device(args.device)
    league = entrants(args.players)
    physics = TwoPlayerDuel(None).physics
    players = [make_entrant_player(entrant, device, physics) for entrant in league]
    print(f"{len(league)} players, {len(league) * (len(league) - 1) // 2} pairs of {args.games} games")
    results = play_league(players, args.games, args.seed, {})
    scores, games = tables(results)
    ratings = fit_elo(scores, games)
    errors = bootstrap_elo(results, np.random.default_rng(args.seed))
    folder = new_run_dir(args.log_dir, "league", "league")
    print(write_outputs(folder, league, results, ratings, errors))
    print(f"wrote {folder / 'league.csv'}, {folder / 'results.csv'}, {folder / 'report.md'}, {folder / 'elo.png'}")
    return folder


if __name__ == "__main__":
    sys.exit(run_cli(main))
