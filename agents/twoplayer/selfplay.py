"""Self-play for BallDuel: the learner against a pool of its own snapshots, and Q-networks as players.

Unity ML-Agents' recipe: every ``snapshot_steps`` env steps the learner's Q-network is copied
into the pool (and written, weights only, to ``snapshots/`` in the run folder); every
``swap_steps`` the opponent changes: the learner as it is now with probability ``p_latest``,
else one of the last ``window`` snapshots, uniformly. ``scripted_share`` of the games face the
built-in players instead (chaser and pusher in turn), so that the replay buffer also holds
games against fixed opponents. The opponent acts for all games of the native vector env in one
forward pass, in the trainer's process: it is the env's ``opponent``, a
:class:`ballenvs.game.Player`. The game is reached through its env id's arena
(:class:`ballenvs.reference.Arena`).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.common.config import SelfPlay
from agents.common.runs import next_multiple
from agents.common.snapshots import save_snapshot, snapshot_name
from agents.twoplayer.players import QPlayer
from ballenvs.game import Seat
from ballenvs.reference import reference_for

#: The built-in players that take the scripted share of the games, in turn.
SCRIPTED = ("chaser", "pusher")


class SelfPlayOpponent(QPlayer):
    """The right ball in self-play: a copy of the learner's Q-network whose weights the
    :class:`SnapshotPool` swaps, and built-in players for the scripted share of the games."""

    def __init__(self, settings: SelfPlay, device: str, frame_stack: int, scripted: list[Any]) -> None:
        super().__init__(None, device, frame_stack)
        self.settings = settings
        self.scripted = scripted

    def act(self, seat: Seat) -> Any:
        actions = super().act(seat)
        n = len(actions)
        count = int(round(self.settings.scripted_share * n))
        if count:
            for k, player in enumerate(self.scripted):
                games = np.arange(k, count, len(self.scripted))  # the first games, the players in turn
                actions[games] = player.act(seat)[games]
        return actions


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
    settings: SelfPlay | None, env_id: str, env_kwargs: Mapping[str, Any], frame_stack: int | None, device: str
) -> SelfPlayOpponent | None:
    """The self-play opponent for a run's envs (None when the run does not play itself); its
    network is bound by the :class:`SnapshotPool` once the learner exists."""
    if settings is None:
        return None
    arena = reference_for(env_id).arena
    scripted = [arena.make_player(name, env_kwargs) for name in SCRIPTED]
    return SelfPlayOpponent(settings, device, frame_stack or 1, scripted)
