"""Self-play for BallDuel: the learner against a pool of its own snapshots, and Q-networks as players.

Unity ML-Agents' recipe: every ``snapshot_steps`` env steps the learner's Q-network is copied
into the pool (and written, weights only, to ``snapshots/`` in the run folder); every
``swap_steps`` the opponent changes: the learner as it is now with probability ``p_latest``,
else one of the last ``window`` snapshots, uniformly. ``scripted_share`` of the games face the
built-in players instead (chaser and pusher in turn), so that the replay buffer also holds
games against fixed opponents. The opponent acts for all games of the native vector env in one
forward pass, in the trainer's process: it is the env's ``opponent``, a
:class:`ballenvs.duel.opponents.Player`.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.config import Key, parse_kwargs
from agents.errors import ConfigError, UsageError
from agents.runs import atomic_path, next_multiple
from ballenvs.backend import SCALAR
from ballenvs.duel.game import DUEL_OPTIONS, TwoPlayerDuel
from ballenvs.duel.observe import SideView
from ballenvs.duel.opponents import Player, make_player

SNAPSHOTS = "snapshots"
SNAPSHOT_FORMAT = "ballenvs-snapshot/1"
#: The built-in players that take the scripted share of the games, in turn.
SCRIPTED = ("chaser", "pusher")


@dataclass(frozen=True)
class SelfPlay:
    """The pool's settings: the config section's ``self_play`` key, e.g. ``"dict(window=5)"``."""

    snapshot_steps: int = 20_000
    swap_steps: int = 10_000
    p_latest: float = 0.5
    window: int = 10
    scripted_share: float = 0.0

    KEYS = {
        "snapshot_steps": Key(int, 1),
        "swap_steps": Key(int, 1),
        "p_latest": Key(float, 0, 1),
        "window": Key(int, 1),
        "scripted_share": Key(float, 0, 1),
    }

    @classmethod
    def from_config(cls, value: Any) -> SelfPlay:
        settings = parse_kwargs("self_play", value)
        valid = [f.name for f in fields(cls)]
        unknown = sorted(set(settings) - set(valid))
        if unknown:
            raise ConfigError(f"self_play key(s) {', '.join(unknown)} unknown; valid: {', '.join(valid)}")
        return cls(**{key: cls.KEYS[key].check(f"self_play {key}", value) for key, value in settings.items()})


class FrameStack:
    """The last ``k`` observations of each of N games, as stable-baselines3's VecFrameStack (and
    VecTransposeImage for images) give them to a model: stacked along the channels, oldest
    first, channel-first for images, zeros before a game's first observation."""

    def __init__(self, k: int) -> None:
        self.k = k
        self.stack: np.ndarray | None = None

    def reset(self, games: Any) -> None:
        if games is True:  # a new batch, perhaps of another size
            self.stack = None
        elif self.stack is not None:
            self.stack[games] = 0

    def push(self, observations: np.ndarray) -> np.ndarray:
        if self.k == 1:
            return observations
        channels = observations.shape[-1]
        if self.stack is None:
            self.stack = np.zeros((*observations.shape[:-1], channels * self.k), dtype=observations.dtype)
        self.stack = np.roll(self.stack, -channels, axis=-1)
        self.stack[..., -channels:] = observations
        return np.moveaxis(self.stack, -1, 1) if self.stack.ndim == 4 else self.stack.copy()


class QPlayer(Player):
    """A Q-network playing one side of N games with the greedy action. It sees the game as its
    model was trained to: the side's observation (``observe``, or its own ``observer`` of the
    balls) through its own frame stack, which it clears for the games that restart."""

    def __init__(self, q: torch.nn.Module | None, device: str, frame_stack: int = 1, observer: Any = None) -> None:
        self.q, self.device = q, torch.device(device)
        self.frames = FrameStack(frame_stack)
        self.observer = observer

    def reset(self, games: Any) -> None:
        self.frames.reset(games)

    def act(self, view: SideView, xp: Any, observe: Any, rngs: Any) -> Any:
        observations = self.observer.observe(view, xp) if self.observer is not None else observe()
        one_game = xp is SCALAR
        batch = self.frames.push(observations[None] if one_game else observations)
        with torch.inference_mode():
            actions = self.q(torch.as_tensor(batch, device=self.device)).argmax(dim=1).cpu().numpy()
        return int(actions[0]) if one_game else actions


class SelfPlayOpponent(QPlayer):
    """The right ball in self-play: a copy of the learner's Q-network whose weights the
    :class:`SnapshotPool` swaps, and built-in players for the scripted share of the games."""

    def __init__(self, settings: SelfPlay, device: str, frame_stack: int, physics: Any) -> None:
        super().__init__(None, device, frame_stack)
        self.settings = settings
        self.scripted = [make_player(name, physics) for name in SCRIPTED]

    def act(self, view: SideView, xp: Any, observe: Any, rngs: Any) -> Any:
        actions = super().act(view, xp, observe, rngs)
        n = len(actions)
        count = int(round(self.settings.scripted_share * n))
        if count:
            for k, player in enumerate(self.scripted):
                games = np.arange(k, count, len(self.scripted))  # the first games, the players in turn
                actions[games] = player.act(view, xp, observe, rngs)[games]
        return actions


def save_snapshot(path: Path, steps: int, q: torch.nn.Module, spec: Mapping[str, Any] | None) -> None:
    """A Q-network's weights (and, for our own networks, their spec), weights only."""
    state = {"format": SNAPSHOT_FORMAT, "steps": steps, "q": {k: v.detach().cpu() for k, v in q.state_dict().items()}}
    if spec is not None:
        state["spec"] = dict(spec)
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def read_snapshot(path: Path, device: str) -> dict[str, Any]:
    try:
        state = torch.load(path, map_location=device, weights_only=True)
    except Exception:  # torch raises many kinds for a file that is not plain tensors
        raise UsageError(f"cannot load snapshot {str(path)!r}: not a weights-only snapshot file") from None
    if not isinstance(state, dict) or state.get("format") != SNAPSHOT_FORMAT:
        raise UsageError(f"{str(path)!r} is not a self-play snapshot (expected format {SNAPSHOT_FORMAT!r})")
    return state


def snapshot_name(steps: int) -> str:
    return f"snapshot_{steps}_steps.pt"


class SnapshotPool:
    """The learner's snapshots and the choice of the opponent (see the module docstring)."""

    def __init__(
        self, settings: SelfPlay, folder: Path, learner: torch.nn.Module, opponent: SelfPlayOpponent, spec: Any, seed: int
    ) -> None:
        self.settings, self.folder, self.learner, self.opponent, self.spec = settings, folder, learner, opponent, spec
        self.rng = np.random.default_rng(seed)
        self.snapshots: list[tuple[int, dict[str, torch.Tensor]]] = []  # the last `window`, in memory
        self.opponent_steps: int | None = None  # the opponent's snapshot; None: the learner as it was at the swap
        opponent.q = copy.deepcopy(learner).eval().requires_grad_(False)
        self._next_snapshot, self._next_swap = 0.0, 0.0

    def start(self, steps: int) -> None:
        self._next_snapshot = next_multiple(steps, self.settings.snapshot_steps)
        self._next_swap = next_multiple(steps, self.settings.swap_steps)

    def choose(self) -> int | None:
        """The index of the snapshot to play against, or None for the learner as it is now."""
        if not self.snapshots or self.rng.random() < self.settings.p_latest:
            return None
        return int(self.rng.integers(len(self.snapshots)))

    def on_step(self, steps: int) -> None:
        if steps >= self._next_snapshot:
            self.snapshot(steps)
            self._next_snapshot = next_multiple(steps, self.settings.snapshot_steps)
        if steps >= self._next_swap:
            self.swap()
            self._next_swap = next_multiple(steps, self.settings.swap_steps)

    def snapshot(self, steps: int) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        save_snapshot(self.folder / snapshot_name(steps), steps, self.learner, self.spec)
        weights = {k: v.detach().clone() for k, v in self.learner.state_dict().items()}
        self.snapshots = [*self.snapshots, (steps, weights)][-self.settings.window :]

    def swap(self) -> None:
        choice = self.choose()
        if choice is None:
            self.opponent.q.load_state_dict(self.learner.state_dict())
            self.opponent_steps = None
        else:
            self.opponent_steps, weights = self.snapshots[choice]
            self.opponent.q.load_state_dict(weights)


def make_opponent(
    settings: SelfPlay | None, env_kwargs: Mapping[str, Any], frame_stack: int | None, device: str
) -> SelfPlayOpponent | None:
    """The self-play opponent for a run's envs (None when the run does not play itself); its
    network is bound by the :class:`SnapshotPool` once the learner exists."""
    if settings is None:
        return None
    physics = TwoPlayerDuel(None, **{key: env_kwargs[key] for key in DUEL_OPTIONS if key in env_kwargs}).physics
    return SelfPlayOpponent(settings, device, frame_stack or 1, physics)


def load_snapshot_policy(path: Path, run_dir: Path, device: str) -> tuple[Any, dict[str, Any]]:
    """A snapshot of a run as a policy that plays (``predict``, ``q_net``), and the run's config."""
    from agents.algorithms import algorithm
    from agents.runs import read_config

    config = read_config(run_dir)
    return algorithm(config["algo"]).load(path, config, device, snapshot=True), config
