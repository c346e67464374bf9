"""Self-play for BallDuel: the learner against a pool of its own snapshots, and Q-networks as players.

Unity ML-Agents' recipe: every ``snapshot_steps`` env steps the learner's Q-network is copied
into the pool (and written, weights only, to ``snapshots/`` in the run folder); every
``swap_steps`` the opponent changes: the learner as it is now with probability ``p_latest``,
else one of the last ``window`` snapshots, uniformly. ``scripted_share`` of the games face the
built-in players instead (``scripted``, in turn; with ``scripted_sampling="pfsp"`` the games move
at every swap to those the learner loses to), so that the replay buffer also holds games
against fixed opponents; ``exploiter`` among them is the game's search exploiter, planning every
step against the learner's current network, so that the learner meets its own holes, and a
model file or run folder there is a frozen model of the game (a best response trained against an
earlier learner, PSRO's way of adding to the pool). The learner's copies play their network's
argmax, or with ``opponent_acts="sample"`` draw from its softmax, as a PPO's policy plays.
``sampling="pfsp"`` draws the snapshots with weight on those the learner still loses to
(prioritised fictitious self-play, as AlphaStar's league). The opponent acts for all games of
the native vector env in one forward pass, in the trainer's process: it is the env's
``opponent``, a :class:`ballenvs.game.Player`. The game is reached through its env id's arena
(:class:`ballenvs.reference.Arena`).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.artifacts.model_players import QPlayer
from agents.artifacts.models import save_snapshot, snapshot_name
from agents.common.configuration.hyperparameters import SelfPlay
from agents.common.errors import UsageError
from agents.session.milestones import next_multiple
from agents.session.opponents import EXPLOITER
from agents.twoplayer.ratings import make_entrant_player, model_entrant
from ballenvs.backend import SCALAR
from ballenvs.game import Seat
from ballenvs.reference import reference_for
from ballenvs.state import copied, generator_state, parts, set_generator_state


class SelfPlayOpponent(QPlayer):
    """The right ball in self-play: a copy of the learner's Q-network whose weights the
    :class:`SnapshotPool` swaps, and built-in players for the scripted share of the games (the
    first games of the batch, each player its own games, in turn). The results of the other
    games go to ``tally`` (the pool's), as the learner's scores."""

    def __init__(self, settings: SelfPlay, device: str, frame_stack: int, scripted: list[Any]) -> None:
        super().__init__(None, device, frame_stack)
        self.settings = settings
        self.scripted = scripted
        self.tally: Callable[[np.ndarray], None] | None = None
        self.assignment: np.ndarray | None = None  # each scripted game's player, an index into `scripted`
        self.scripted_scores = np.zeros((len(scripted), 2))  # the learner's recent [points, games] against each

    def pool(self, folder: Path, learner: torch.nn.Module, spec: Any, seed: int) -> SnapshotPool:
        """The pool of ``learner``'s snapshots (saved in ``folder``) this opponent plays from."""
        return SnapshotPool(self.settings, folder, learner, self, spec, seed)

    def _scripted_games(self, n: int) -> list[np.ndarray]:
        """Each scripted player's games of a batch of ``n`` (the first games, in turn until
        :meth:`share_scripted` moves them)."""
        count = int(round(self.settings.scripted_share * n))
        if self.assignment is None or len(self.assignment) != count:
            self.assignment = np.arange(count) % len(self.scripted)
        return [np.flatnonzero(self.assignment == k) for k in range(len(self.scripted))]

    def share_scripted(self) -> None:
        """PFSP over the scripted players (``scripted_sampling="pfsp"``, at every swap): each keeps
        one game and the rest go with weight ``(1 - s) ** pfsp_power``, ``s`` the learner's score
        against the player over its recent games (halved at every swap, with a prior of one win and
        one loss). A player whose games change forgets their past, as at a reset."""
        if self.assignment is None or not len(self.scripted):
            return
        points, games = self.scripted_scores.T
        weights = pfsp_weights(points, games, self.settings.pfsp_power)
        self.scripted_scores *= 0.5  # so that the shares follow the learner as it is now
        assignment = reassigned(self.assignment, apportioned(len(self.assignment), weights))
        for k, player in enumerate(self.scripted):
            if not np.array_equal(assignment == k, self.assignment == k):
                player.reset(None)
        self.assignment = assignment

    def scripted_shares(self) -> dict[str, int]:
        """How many games each scripted player holds now (its name as ``scripted`` lists it)."""
        held = (
            np.zeros(len(self.scripted), dtype=int)
            if self.assignment is None
            else np.bincount(self.assignment, minlength=len(self.scripted))
        )
        return dict(zip(self.settings.scripted_players, map(int, held)))

    def act(self, seat: Seat) -> Any:
        actions = super().act(seat) if self.settings.opponent_acts == "greedy" else self._sampled(seat)
        for player, games in zip(self.scripted, self._scripted_games(len(actions))):
            if len(games):  # each player sees its own games only: a planner plans for those alone
                view = type(seat.view)(*(None if field is None else field[games] for field in seat.view))
                rngs = [seat.rngs[i] for i in games]
                observe = functools.partial(_rows, seat.observe, games)
                actions[games] = player.act(Seat(view, seat.xp, observe, rngs))
        return actions

    def _sampled(self, seat: Seat) -> Any:
        """Every game's action drawn from the softmax of the network's outputs, by the game's own
        generator (part of the env's state, so that a resumed run draws the same)."""
        probabilities = torch.softmax(self._q_values(seat).float(), dim=1).cpu().numpy()
        draws = np.array([rng.random() for rng in seat.rngs])[:, None]
        cumulative = probabilities.cumsum(axis=1)  # scaled draws stay below its last entry: never past the last action
        actions = (cumulative < draws * cumulative[:, -1:]).sum(axis=1)
        return int(actions[0]) if seat.xp is SCALAR else actions

    def reset(self, games: np.ndarray | None) -> None:
        super().reset(games)
        if games is None:
            for player in self.scripted:
                player.reset(None)
            return
        for player, own in zip(self.scripted, self._scripted_games(len(games))):
            player.reset(games[own])

    def get_state(self) -> dict[str, Any]:
        """Its frames, its scripted players' memory and their games (the pool saves the network)."""
        return {
            **super().get_state(),
            "scripted": [player.get_state() for player in self.scripted],
            "scripted_games": copied(self.assignment),
            "scripted_scores": self.scripted_scores.copy(),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        super().set_state(state)
        scripted = parts(state, ("scripted",), "self-play opponent")["scripted"]
        if not isinstance(scripted, list) or len(scripted) != len(self.scripted):
            raise ValueError(f"state self-play opponent: expected {len(self.scripted)} scripted players' states")
        for player, saved in zip(self.scripted, scripted):
            player.set_state(saved)
        if "scripted_games" in state:  # a state saved before the shares could move has none: in turn
            assignment, scores = state["scripted_games"], np.asarray(state.get("scripted_scores"), dtype=float)
            if assignment is not None and not (
                isinstance(assignment, np.ndarray) and assignment.ndim == 1 and np.isin(assignment, range(len(scripted))).all()
            ):
                raise ValueError(f"state self-play opponent scripted_games: expected indices below {len(scripted)}")
            if scores.shape != self.scripted_scores.shape:
                raise ValueError(f"state self-play opponent scripted_scores: expected {self.scripted_scores.shape}")
            self.assignment, self.scripted_scores = copied(assignment), scores.copy()

    def finished(self, games: np.ndarray | None, scores: Any) -> None:
        if games is None:
            return
        learner_points = (1.0 - np.asarray(scores, dtype=float)) / 2.0  # `scores` are this side's
        for k, own in enumerate(self._scripted_games(len(games))):
            ended = own[games[own]]
            self.scripted_scores[k] += (learner_points[ended].sum(), len(ended))
        if self.tally is None:
            return
        played = games.copy()
        played[: int(round(self.settings.scripted_share * len(games)))] = False  # the scripted games
        if played.any():
            self.tally(-np.asarray(scores)[played])


def pfsp_weights(points: np.ndarray, games: np.ndarray, power: float) -> np.ndarray:
    """Prioritised fictitious self-play's weight of each opponent, ``(1 - s) ** power``: ``s`` the
    learner's score against it, ``points`` (a win 1, a draw 1/2) over ``games``, with a prior of one
    win and one loss, so that an opponent not met yet weighs as an even one."""
    return (1.0 - (points + 1.0) / (games + 2.0)) ** power


def apportioned(total: int, weights: np.ndarray) -> np.ndarray:
    """``total`` games split by ``weights``: one each first (where there are enough), the rest in
    proportion, the largest remainders rounding up (ties to the first)."""
    floor = 1 if total >= len(weights) else 0
    rest = total - floor * len(weights)
    quotas = rest * weights / weights.sum() if weights.sum() > 0 else np.full(len(weights), rest / len(weights))
    counts = np.floor(quotas).astype(int)
    counts[np.argsort(-(quotas - counts), kind="stable")[: rest - counts.sum()]] += 1
    return counts + floor


def reassigned(assignment: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """``assignment`` (each game's player) changed as little as gives each player ``counts[k]``
    games: a player keeps its first games, the ones it gives up go to those short of theirs."""
    kept = np.full(len(assignment), -1)
    for k, count in enumerate(counts):
        mine = np.flatnonzero(assignment == k)[:count]
        kept[mine] = k
    short = np.repeat(np.arange(len(counts)), counts - np.bincount(kept[kept >= 0], minlength=len(counts)))
    kept[kept < 0] = short
    return kept


def _rows(observe: Callable[[], Any], games: np.ndarray) -> Any:
    return observe()[games]


class SnapshotPool:
    """The learner's snapshots and the choice of the opponent (see the module docstring). With
    ``sampling="pfsp"`` (prioritised fictitious self-play) a snapshot is drawn with weight
    ``(1 - s) ** pfsp_power``, ``s`` the learner's mean score against it so far (a win 1, a draw
    1/2), counted from the games it played against that snapshot with a prior of one win and one
    loss; uniformly otherwise."""

    def __init__(
        self, settings: SelfPlay, folder: Path, learner: torch.nn.Module, opponent: SelfPlayOpponent, spec: Any, seed: int
    ) -> None:
        self.settings, self.folder, self.learner, self.opponent, self.spec = settings, folder, learner, opponent, spec
        self.rng = np.random.default_rng(seed)
        self.snapshots: list[tuple[int, dict[str, torch.Tensor]]] = []  # the last `window`, in memory
        self.opponent_steps: int | None = None  # the opponent's snapshot; None: the learner as it was at the swap
        self.scores: dict[int, list[float]] = {}  # snapshot steps -> [the learner's points against it, games]
        # The opponent's network, whose weights the swaps replace.
        self.network: torch.nn.Module = copy.deepcopy(learner).eval().requires_grad_(False)
        opponent.q = self.network
        opponent.tally = self.record
        for player in opponent.scripted:  # a search exploiter plans against the learner as it is now
            model = getattr(player, "model", None)
            if isinstance(model, QPlayer) and model.q is None:
                model.q = learner
        self._next_snapshot, self._next_swap = 0.0, 0.0

    def start(self, steps: int) -> None:
        self._next_snapshot = next_multiple(steps, self.settings.snapshot_steps)
        self._next_swap = next_multiple(steps, self.settings.swap_steps)

    def record(self, learner_scores: np.ndarray) -> None:
        """The learner's results (+1, 0, -1) in games against the current opponent."""
        if self.opponent_steps is not None:
            tally = self.scores.setdefault(self.opponent_steps, [0.0, 0.0])
            tally[0] += float(np.sum((learner_scores + 1.0) / 2.0))
            tally[1] += len(learner_scores)

    def weights(self) -> np.ndarray:
        """How likely each snapshot in the pool is to be drawn."""
        if self.settings.sampling == "uniform":
            return np.full(len(self.snapshots), 1.0 / len(self.snapshots))
        points = np.array([self.scores.get(steps, [0.0, 0.0]) for steps, _ in self.snapshots])
        weights = pfsp_weights(points[:, 0], points[:, 1], self.settings.pfsp_power)
        return weights / weights.sum()

    def choose(self) -> int | None:
        """The index of the snapshot to play against, or None for the learner as it is now."""
        if not self.snapshots or self.rng.random() < self.settings.p_latest:
            return None
        return int(self.rng.choice(len(self.snapshots), p=self.weights()))

    def on_step(self, steps: int) -> dict[str, float]:
        """Snapshots and swaps due by ``steps``; after a swap that moves the scripted games, how
        many each player holds (``self_play/scripted_games_<name>``)."""
        if steps >= self._next_snapshot:
            self.snapshot(steps)
            self._next_snapshot = next_multiple(steps, self.settings.snapshot_steps)
        if steps < self._next_swap:
            return {}
        self.swap()
        self._next_swap = next_multiple(steps, self.settings.swap_steps)
        if self.settings.scripted_sampling != "pfsp":
            return {}
        return {f"self_play/scripted_games_{name}": n for name, n in self.opponent.scripted_shares().items()}

    def snapshot(self, steps: int) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        save_snapshot(self.folder / snapshot_name(steps), steps, self.learner, self.spec)
        weights = {k: v.detach().clone() for k, v in self.learner.state_dict().items()}
        self.snapshots = [*self.snapshots, (steps, weights)][-self.settings.window :]

    def get_state(self) -> dict[str, Any]:
        """Where its choices stand: its generator, the tallies, the snapshots it holds (with their
        weights: a resumed run's folder holds none of them) and the opponent's network now."""
        return {
            "rng": generator_state(self.rng),
            "scores": {steps: list(tally) for steps, tally in self.scores.items()},
            "snapshots": [steps for steps, _ in self.snapshots],
            "snapshot_weights": [weights for _, weights in self.snapshots],
            "opponent_steps": self.opponent_steps,
            "opponent": {k: v.detach().clone() for k, v in self.network.state_dict().items()},
        }

    def set_state(self, state: dict[str, Any]) -> None:
        keys = ("rng", "scores", "snapshots", "snapshot_weights", "opponent_steps", "opponent")
        state = parts(state, keys, "self-play pool")
        steps_held, scores, opponent_steps = state["snapshots"], state["scores"], state["opponent_steps"]
        if not isinstance(steps_held, list) or not all(_is_count(steps) for steps in steps_held):
            raise ValueError(f"state self-play pool snapshots: expected a list of step counts, got {steps_held!r:.80}")
        held = state["snapshot_weights"]
        if not isinstance(held, list) or len(held) != len(steps_held):
            raise ValueError(f"state self-play pool snapshot_weights: expected {len(steps_held)} networks' weights")
        if not isinstance(scores, dict) or not all(
            _is_count(steps) and isinstance(t, list) and len(t) == 2 and all(isinstance(x, float) for x in t)
            for steps, t in scores.items()
        ):
            raise ValueError("state self-play pool scores: expected step counts -> [points, games]")
        if opponent_steps is not None and opponent_steps not in steps_held:
            raise ValueError(f"state self-play pool opponent_steps: {opponent_steps!r} is none of its snapshots")
        for name, weights in [("opponent", state["opponent"]), *(("snapshot_weights", weights) for weights in held)]:
            try:  # on the opponent's network: each must fit it
                self.network.load_state_dict(weights)
            except (RuntimeError, TypeError, AttributeError, ValueError) as error:
                raise ValueError(
                    f"state self-play pool {name}: not this run's network ({str(error).splitlines()[0]})"
                ) from None
        self.network.load_state_dict(state["opponent"])
        snapshots = list(zip(steps_held, held))
        set_generator_state(self.rng, state["rng"], "self-play pool rng")
        self.snapshots, self.opponent_steps = snapshots, opponent_steps
        self.scores = {steps: list(tally) for steps, tally in scores.items()}

    def swap(self) -> None:
        if self.settings.scripted_sampling == "pfsp":
            self.opponent.share_scripted()
        choice = self.choose()
        if choice is None:
            self.network.load_state_dict(self.learner.state_dict())
            self.opponent_steps = None
        else:
            self.opponent_steps, weights = self.snapshots[choice]
            self.network.load_state_dict(weights)


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def make_opponent(
    settings: SelfPlay | None, env_id: str, env_kwargs: Mapping[str, Any], frame_stack: int | None, device: str
) -> SelfPlayOpponent | None:
    """The self-play opponent for a run's envs (None when the run does not play itself); its
    network is bound by the :class:`SnapshotPool` once the learner exists. ``settings`` come
    checked (:func:`agents.session.opponents.check_players`, before the run folder)."""
    if settings is None:
        return None
    arena = reference_for(env_id).arena
    scripted = [
        scripted_player(name, k, arena, env_id, env_kwargs, frame_stack or 1, device)
        for k, name in enumerate(settings.scripted_players)
    ]
    if any(player is None for player in scripted):
        raise UsageError(f"self_play scripted={settings.scripted!r}: {env_id} has no search exploiter")
    return SelfPlayOpponent(settings, device, frame_stack or 1, scripted)


def evaluated_opponents(
    settings: SelfPlay, env_id: str, env_kwargs: Mapping[str, Any], frame_stack: int | None, device: str
) -> dict[str, Any]:
    """``self_play``'s ``evaluated`` players, by name, as the env's ``opponent`` option takes them:
    a built-in player's name as it is, a model as a player that sees the game as it was trained to."""
    reference = reference_for(env_id)
    return {
        name: name if reference.knows(name) else make_entrant_player(model_entrant(name), device, env_id, dict(env_kwargs))
        for name in settings.evaluated_players
    }


def scripted_player(
    name: str, k: int, arena: Any, env_id: str, env_kwargs: Mapping[str, Any], frame_stack: int, device: str
) -> Any:
    """One of ``self_play``'s scripted players (checked by :func:`agents.session.opponents.check_players`): the search
    exploiter (``k`` seeds its plans), a built-in player, or a frozen model of the game."""
    if name == EXPLOITER:
        return arena.search_exploiter(QPlayer(None, device, frame_stack), env_kwargs, seed=k)
    if arena.knows(name):
        return arena.make_player(name, env_kwargs)
    return make_entrant_player(model_entrant(name), device, env_id, dict(env_kwargs))
