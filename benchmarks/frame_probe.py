"""What the pixel frames tell: a supervised probe from the stacked frames a learner sees to the state.

    python -m benchmarks.frame_probe [--sizes 36 64] [--stacks 2 4] [--games 600] [--epochs 12]
                                     [--subpixel] [--threads 1]

Before a learner is tuned on pixels, measure whether its input carries what the game needs
(DESIGN.md, principle 12). Games of BallSumo-v0 between the scripted players (every pair, both
orders, random among them) are recorded as the left player sees them: its pixel frames, stacked
as the trainers stack them (oldest first, zeros before the game's first frame), and its state
vector (own and other position and velocity, both distances to the edge, the time left). A small
CNN regresses the state from the stacks; each feature's R^2 on held-out games says what the
frames carry. A feature under :data:`LOST_BELOW` is reported lost: a learner cannot act on it.

A single frame (``--stacks 1``) cannot tell velocity: that row is the probe's own control.

Beside the CNN, a readout built by hand: the own ball's velocity as the shift of its centroid
(pixels weighted by how much brighter than the other ball they are, the clock's rows left out)
from the oldest to the newest frame of the stack, fitted linearly. Where it explains a velocity
the CNN does not, the frames carry it and the regressor is what falls short.
"""

from __future__ import annotations

import itertools
import math
import sys
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
from torch import nn

from agents.artifacts.figures import pyplot, save_png
from agents.artifacts.runs import check_output_file
from agents.session.cli import Parser, check_seed, run_cli
from ballenvs import SUMO_RULES
from ballenvs.duel.observe import MIN_OBS_SIZE, OTHER_BALL, OWN_BALL, StateObserver
from ballenvs.duel.physics import LEFT, RIGHT
from ballenvs.duel.roster import make_player
from ballenvs.duel.two_player_game import TwoPlayerDuel
from benchmarks.common import Measurements, check_ranges, machine, progress_flag, row, write_json

#: The state vector's features, in :class:`ballenvs.duel.observe.StateObserver`'s order (with the clock).
FEATURES: tuple[str, ...] = ("own x", "own y", "own vx", "own vy", "other x", "other y", "other vx", "other vy")
FEATURES += ("own edge", "other edge", "time left")
#: A feature the probe explains less than this share of (R^2 on held-out games) is lost.
LOST_BELOW = 0.5
#: The players whose games are recorded: every scripted style, and random for states they never reach.
PROBE_PLAYERS = ("random", "chaser", "pusher", "anchor", "sprinter")
HELD_OUT_EVERY = 5  # every 5th game is held out
#: The command's bounds: its largest recording (128x128 frames, 8 stacked, 200 games a pair) holds
#: about 4 GiB of stacks.
MAX_PROBE_SIZE, MAX_PROBE_STACK, MAX_PROBE_GAMES = 128, 8, 200


@dataclass
class Recording:
    """Games as the left player saw them: ``frames`` (T, N, size, size) uint8, ``states``
    (T, N, features) float32, and ``alive`` (T, N): whether game n was still running at step t."""

    frames: np.ndarray
    states: np.ndarray
    alive: np.ndarray


def record_games(obs_size: int, games_per_pair: int, seed: int = 0, **duel_options: object) -> Recording:
    """Games of BallSumo-v0 between every ordered pair of :data:`PROBE_PLAYERS`, each pair's games
    played at once; ``duel_options`` reach :class:`TwoPlayerDuel` (e.g. ``subpixel=True``)."""
    parts = []
    pairs = list(itertools.product(PROBE_PLAYERS, repeat=2))
    for index, (left, right) in enumerate(pairs):
        parts.append(_record_pair(left, right, obs_size, games_per_pair, seed * len(pairs) + index, duel_options))
    steps = max(part.frames.shape[0] for part in parts)
    padded = [_pad_steps(part, steps) for part in parts]
    return Recording(*(np.concatenate([getattr(p, name) for p in padded], axis=1) for name in ("frames", "states", "alive")))


def _record_pair(left: str, right: str, obs_size: int, games: int, seed: int, duel_options: dict) -> Recording:
    duel = TwoPlayerDuel(games, obs_type="pixels", obs_size=obs_size, **{**SUMO_RULES, **duel_options})
    state_observer = StateObserver(duel.physics, clock=True)
    players = {LEFT: make_player(left, duel.physics, duel.rules), RIGHT: make_player(right, duel.physics, duel.rules)}
    rngs = [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(games)]
    duel.reset(rngs)
    for player in players.values():
        player.reset(None)
    frames, states, alive = [], [], []
    running = np.ones(games, dtype=bool)
    while running.any():
        frames.append(duel.observe(LEFT)[..., 0])
        states.append(state_observer.observe(duel.view(LEFT), duel.xp))
        alive.append(running.copy())
        actions = {side: player.act(duel.seat(side, rngs, player)) for side, player in players.items()}
        _, terminated = duel.play(actions[LEFT], actions[RIGHT])
        running &= ~terminated
    return Recording(np.stack(frames), np.stack(states), np.stack(alive))


def _pad_steps(recording: Recording, steps: int) -> Recording:
    extra = steps - recording.frames.shape[0]
    return Recording(
        *(
            np.concatenate([a, np.zeros((extra, *a.shape[1:]), a.dtype)])
            for a in (recording.frames, recording.states, recording.alive)
        )
    )


def stacked_samples(recording: Recording, depth: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Every live step of every game as the learner sees it: (M, depth, size, size) stacks, oldest
    frame first and zeros before the game's first frame; the (M, features) states; each sample's game."""
    frames = recording.frames
    padded = np.concatenate([np.zeros((depth - 1, *frames.shape[1:]), frames.dtype), frames])
    steps, games = np.nonzero(recording.alive)
    stacks = np.stack([padded[steps + k, games] for k in range(depth)], axis=1)
    return stacks, recording.states[steps, games], games


class ProbeCNN(nn.Module):
    """A regressor strong enough not to be the bottleneck: three convolutions (the second and third
    at full stride 1 so that a pixel's shift survives), then two dense layers."""

    def __init__(self, depth: int, size: int, outputs: int) -> None:
        super().__init__()
        self.convs = nn.Sequential(
            nn.Conv2d(depth, 32, 4, stride=2),
            nn.ReLU(),
            nn.Conv2d(32, 64, 3, stride=2),
            nn.ReLU(),
            nn.Conv2d(64, 64, 3, stride=1),
            nn.ReLU(),
            nn.Flatten(),
        )
        with torch.no_grad():
            width = self.convs(torch.zeros(1, depth, size, size)).shape[1]
        self.head = nn.Sequential(nn.Linear(width, 256), nn.ReLU(), nn.Linear(256, outputs))

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        return self.head(self.convs(frames.float() / 255.0))


def r_squared(predicted: np.ndarray, actual: np.ndarray) -> np.ndarray:
    """Each column's coefficient of determination: 1 - residual / total sum of squares (a
    constant column, which no frame can be blamed for, counts as explained)."""
    residual = ((actual - predicted) ** 2).sum(axis=0)
    total = ((actual - actual.mean(axis=0)) ** 2).sum(axis=0)
    return np.where(total > 0, 1.0 - residual / np.maximum(total, 1e-12), 1.0)


def fit_probe(
    stacks: np.ndarray,
    states: np.ndarray,
    held_out: np.ndarray,
    epochs: int = 12,
    batch_size: int = 128,
    seed: int = 0,
) -> np.ndarray:
    """Train :class:`ProbeCNN` on the samples not ``held_out`` (standardised targets, MSE, Adam);
    each feature's R^2 on the held-out ones."""
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    train, test = np.flatnonzero(~held_out), np.flatnonzero(held_out)
    mean, std = states[train].mean(axis=0), states[train].std(axis=0) + 1e-6
    targets = torch.from_numpy((states - mean) / std).float()
    frames = torch.from_numpy(stacks)
    model = ProbeCNN(stacks.shape[1], stacks.shape[2], states.shape[1])
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    updates = epochs * math.ceil(len(train) / batch_size)
    schedule = torch.optim.lr_scheduler.OneCycleLR(optimizer, max_lr=2e-3, total_steps=updates)
    for _ in range(epochs):
        order = rng.permutation(train)
        for start in range(0, len(order), batch_size):
            batch = torch.from_numpy(order[start : start + batch_size])
            loss = nn.functional.mse_loss(model(frames[batch]), targets[batch])
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            schedule.step()
    model.eval()
    with torch.inference_mode():
        predicted = torch.cat([model(frames[torch.from_numpy(test[i : i + 1024])]) for i in range(0, len(test), 1024)])
    return r_squared(predicted.numpy() * std + mean, states[test])


def probe(recording: Recording, depth: int, epochs: int = 12, seed: int = 0) -> dict[str, float]:
    """Each feature's held-out R^2 from ``depth`` stacked frames of ``recording``."""
    stacks, states, games = stacked_samples(recording, depth)
    scores = fit_probe(stacks, states, games % HELD_OUT_EVERY == 0, epochs=epochs, seed=seed)
    return dict(zip(FEATURES, (float(s) for s in scores)))


def centroid_velocity(recording: Recording, depth: int, clock_rows: int = 2) -> dict[str, float]:
    """R^2 of the own ball's velocity fitted linearly to its centroid's shift over the stack
    (samples whose oldest frame exists)."""
    stacks, states, _ = stacked_samples(recording, depth)
    full = stacks[:, 0].any(axis=(1, 2))  # the stack reaches back depth frames
    stacks, states = stacks[full].astype(np.float64), states[full]
    size = stacks.shape[-1]
    rows, cols = np.mgrid[0:size, 0:size]

    def centroid(frames: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        weight = np.clip((frames - OTHER_BALL) / (OWN_BALL - OTHER_BALL), 0.0, 1.0)
        weight[:, :clock_rows] = 0.0
        mass = weight.sum(axis=(1, 2)) + 1e-9
        return (weight * cols).sum(axis=(1, 2)) / mass, (weight * rows).sum(axis=(1, 2)) / mass

    (x0, y0), (x1, y1) = centroid(stacks[:, 0]), centroid(stacks[:, -1])
    scores = {}
    for name, shift in (("own vx", x1 - x0), ("own vy", y0 - y1)):  # rows grow downwards, y upwards
        target = states[:, FEATURES.index(name)]
        design = np.stack([shift, np.ones_like(shift)], axis=1)
        fitted = design @ np.linalg.lstsq(design, target, rcond=None)[0]
        scores[name] = float(r_squared(fitted[:, None], target[:, None])[0])
    return scores


def lost_features(scores: dict[str, float]) -> list[str]:
    """The features the frames do not carry (R^2 under :data:`LOST_BELOW`)."""
    return [name for name, score in scores.items() if score < LOST_BELOW]


def main(argv: list[str] | None = None) -> dict:
    parser = Parser(prog="python -m benchmarks.frame_probe", description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[36, 64], help="frame sizes (default: 36 64)")
    parser.add_argument("--stacks", type=int, nargs="+", default=[2, 4], help="frames stacked (default: 2 4)")
    parser.add_argument("--games", type=int, default=24, help="games recorded per ordered pair of players (default: 24)")
    parser.add_argument("--epochs", type=int, default=12, help="passes of the probe over its training games (default: 12)")
    parser.add_argument("--subpixel", action="store_true", help="frames with area-weighted ball edges (obs option subpixel)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch threads (default: 1)")
    parser.add_argument("--plot", default=None, metavar="FILE.png", help="also draw the R^2 table as a chart there")
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges(  # the recordings and stacks grow with sizes, stacks and games: bounded to fit in memory
        [
            ("--sizes", args.sizes, (MIN_OBS_SIZE, MAX_PROBE_SIZE)),
            ("--stacks", args.stacks, (1, MAX_PROBE_STACK)),
            ("--games", args.games, (HELD_OUT_EVERY, MAX_PROBE_GAMES)),
            ("--epochs", args.epochs, (1, 1000)),
            ("--threads", args.threads, (1, 1024)),
        ]
    )
    check_seed(args.seed)
    plot = None if args.plot is None else check_output_file(args.plot, "--plot", (".png",))
    torch.set_num_threads(args.threads)
    options = {"subpixel": True} if args.subpixel else {}
    results = []
    velocity_stacks = [depth for depth in args.stacks if depth > 1]
    readouts = []  # the centroid readouts, from the same recordings: their table comes after the probe's
    with Measurements(len(args.sizes) * (len(args.stacks) + len(velocity_stacks)), not args.no_progress) as shown:
        shown.write(row("frames", "stack", *FEATURES, "lost", "seconds"))
        shown.write(row(*["---"] * (len(FEATURES) + 4)))
        for size in args.sizes:
            recording = record_games(size, args.games, args.seed, **options)
            for depth in args.stacks:
                start = time.perf_counter()
                scores = probe(recording, depth, args.epochs, args.seed)
                seconds = time.perf_counter() - start
                results.append({"size": size, "stack": depth, "r2": scores, "lost": lost_features(scores), "seconds": seconds})
                lost = ", ".join(lost_features(scores)) or "none"
                shown.result(row(f"{size}x{size}", depth, *(f"{scores[f]:.2f}" for f in FEATURES), lost, f"{seconds:.0f}"))
            for depth in velocity_stacks:
                readouts.append({"size": size, "stack": depth, "centroid_r2": centroid_velocity(recording, depth)})
                shown.result()
        shown.write("")
        shown.write(row("frames", "stack", "own vx by centroid shift", "own vy by centroid shift"))
        shown.write(row(*["---"] * 4))
        for r in readouts:
            readout = r["centroid_r2"]
            shown.write(row(f"{r['size']}x{r['size']}", r["stack"], f"{readout['own vx']:.2f}", f"{readout['own vy']:.2f}"))
    results += readouts
    payload = {"machine": machine(), "subpixel": args.subpixel, "games_per_pair": args.games, "results": results}
    write_json("frame_probe_subpixel" if args.subpixel else "frame_probe", payload)
    if plot is not None:
        save_png(probe_figure(results, "subpixel frames" if args.subpixel else "plain frames"), plot)
        print(f"wrote {plot}")
    return payload


def probe_figure(results: list[dict], frames: str) -> Any:
    """The R^2 of every feature (columns) for every frame size and stack (rows), as a heat map with
    its values written in: what the frames carry at a glance, the lost features in the dark cells."""
    probed = [r for r in results if "r2" in r]
    scores = np.array([[r["r2"][feature] for feature in FEATURES] for r in probed])
    fig, ax = pyplot().subplots(figsize=(1.0 * len(FEATURES) + 2, 0.6 * len(probed) + 2))
    image = ax.imshow(np.clip(scores, 0, 1), cmap="viridis", vmin=0, vmax=1, aspect="auto")
    for (i, j), score in np.ndenumerate(scores):
        ax.text(j, i, f"{score:.2f}", ha="center", va="center", color="white" if score < 0.6 else "black", fontsize=8)
    ax.set_xticks(range(len(FEATURES)), FEATURES, rotation=45, ha="right")
    ax.set_yticks(range(len(probed)), [f"{r['size']}x{r['size']}, {r['stack']} stacked" for r in probed])
    ax.set_xlabel("state feature")
    ax.set_ylabel("frames")
    ax.set_title(f"What the frames carry: R² of a CNN probe on held-out games, BallSumo-v0 ({frames})")
    fig.colorbar(image, ax=ax, label=f"R² (lost below {LOST_BELOW})")
    fig.tight_layout()
    return fig


if __name__ == "__main__":
    sys.exit(run_cli(main))
