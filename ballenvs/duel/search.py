"""Planning by simulation: the search exploiter (:class:`Lookahead`) and the built-in ``planner``
(:class:`Planner`), both over the batched core.

Every plan copies each game into many branches in the planner's own frame (the rules are
mirror-symmetric: its ball on the left), holds one of the 9 actions for one of a few horizons and
then heads for the centre (as ``anchor`` does), and scores each branch where it ends: a win (the
sooner the better), else no loss, else its ball further inside the ring than the opponent's.
What plays the other side of the branches is the difference:

- :class:`Lookahead`, the search exploiter of approximate exploitability, lets a model of its
  opponent play it (one batched call per simulated step, for all games and branches at once) and
  takes the first action of the best branch. Given the opponent itself as the model, it knows
  the opponent's next moves; a model with memory (stacked frames) is simulated from an empty one.
- :class:`Planner` assumes no model. Each of its branches meets every one of the opponent's
  own hold-and-return replies and a few players of different styles (a charger, a pusher and
  the first learned champion), and it takes the branch whose worst outcome is best: a branch that
  one of those replies beats is not chosen while another holds against all of them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ballenvs.backend import SCALAR
from ballenvs.directions import N_ACTIONS
from ballenvs.duel.champion import Champion
from ballenvs.duel.heuristics import Anchor
from ballenvs.duel.physics import LEFT, RIGHT, DuelState
from ballenvs.duel.two_player_game import LEFT_WINS, RIGHT_WINS, TwoPlayerDuel
from ballenvs.game import Player, Seat
from ballenvs.state import generator_state, parts, set_generator_state

#: Steps each branch holds its action for: short ones dodge, long ones find the runs off the edge.
HORIZONS = (3, 8, 16, 30)
#: The :class:`Planner`'s horizons, its own and its opponent's replies alike: without the 30-step
#: ones it won 185 of 200 games against pusher (not 149) and 198 against a search player
#: modelling it as anchor (not 98), at half the cost (benchmarks/RESULTS.md, The planner).
PLANNER_HORIZONS = (3, 8, 16)
WIN, LOSS = 10.0, -10.0  # beyond any difference of the balls' distances from the centre (a few ring radii)
#: The players of different styles each :class:`Planner` branch also meets (the first champion,
#: whom the planner was measured with).
PLANNER_MODELS = ("chaser", "pusher", "dqn_champion")
#: How much a :class:`Planner` branch's mean outcome counts beside its worst, to break ties.
PLANNER_MEAN_WEIGHT = 0.1

#: The other side's actions at step ``t`` of the simulated games, from its seat there.
Reply = Callable[[int, Seat], Any]
#: A value in [-1, 1] (a win 1, a loss -1) of each simulated game still running where its branch
#: ends, from the planning side's seat there: a learned network's, say.
LeafValue = Callable[[Seat], np.ndarray]


def seat_view(seat: Seat) -> tuple[list[np.ndarray], np.ndarray | None]:
    """A seat's balls (own, then the other's) and clock as arrays, one game or a batch alike."""
    view = [np.atleast_1d(np.asarray(value, dtype=np.float64)) for value in seat.view[:8]]
    time_left = seat.view.time_left
    return view, None if time_left is None else np.atleast_1d(np.asarray(time_left, dtype=np.float64))


class Branches:
    """Simulates branches of games from a side's view: each branch holds one action for some steps,
    then heads for the centre, against what ``reply`` plays for the other side."""

    def __init__(
        self,
        duel_options: Mapping[str, Any],
        rng: np.random.Generator,
        leaf_value: LeafValue | None = None,
        leaf_weight: float = 0.0,
    ) -> None:
        if not 0.0 <= leaf_weight <= 1.0:
            raise ValueError(f"leaf_weight must be in [0, 1], got {leaf_weight!r}")
        self.options = dict(duel_options)
        # A learned value of where a branch ends, mixed into the distances' score (expert iteration's
        # search with its network at the leaves).
        self.leaf_value, self.leaf_weight = leaf_value, leaf_weight
        one_game = TwoPlayerDuel(None, **self.options)
        self.game_steps, self.physics = one_game.game_steps, one_game.physics
        self.rng = rng
        self.continuation = Anchor()  # after its hold, a branch heads back for the centre
        self._sims: dict[int, TwoPlayerDuel] = {}  # by batch size: built once, its state set at every plan

    def scores(
        self, view: list[np.ndarray], time_left: np.ndarray | None, actions: np.ndarray, holds: np.ndarray, reply: Reply
    ) -> np.ndarray:
        """(games, branches) scores: every game copied once per entry of ``actions`` and ``holds``
        (the same branches for every game; or (games, branches) arrays, each game's own)."""
        games, branches = len(view[0]), actions.shape[-1]
        n = games * branches
        sim = self._sims.get(n) or self._sims.setdefault(n, TwoPlayerDuel(n, **self.options))
        # Our ball on the left, the opponent's on the right: our frame as the world.
        own_x, own_y, own_vx, own_vy, other_x, other_y, other_vx, other_vy = view
        world = DuelState(own_x, own_y, other_x, other_y, own_vx, own_vy, other_vx, other_vy)
        sim.core.state = DuelState(*(np.repeat(field, branches) for field in world))
        played = np.zeros(games, dtype=np.int64)
        if time_left is not None and sim.clock:
            played = np.rint((1.0 - time_left) * self.game_steps).astype(np.int64)
        sim.core.steps = np.repeat(played, branches)
        ours, ours_held = (np.tile(part, games) if part.ndim == 1 else part.reshape(-1) for part in (actions, holds))
        score = np.zeros(n)
        running = np.ones(n, dtype=bool)
        rngs = [self.rng] * n
        self.continuation.reset(None)
        for t in range(int(holds.max())):
            then = self.continuation.act(sim.seat(LEFT, rngs))
            theirs = reply(t, sim.seat(RIGHT, rngs))
            _, terminated = sim.play(np.where(t < ours_held, ours, then), theirs)
            ended = running & terminated
            score = np.where(ended & (sim.winner == LEFT_WINS), WIN - t * 1e-3, score)  # sooner wins rank higher
            score = np.where(ended & (sim.winner == RIGHT_WINS), LOSS + t * 1e-3, score)
            running &= ~terminated
            if not running.any():
                break
        left, right = sim.core.distances_from_centre()
        leaf = (right - left) / sim.physics.ring_radius
        if self.leaf_value is not None and self.leaf_weight > 0:
            learned = np.clip(self.leaf_value(sim.seat(LEFT, rngs)), -1.0, 1.0)
            leaf = (1.0 - self.leaf_weight) * leaf + self.leaf_weight * learned
        score = np.where(running, leaf, score)
        return score.reshape(games, branches)


def hold_branches(horizons: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """Branch k holds action ``actions[k]`` for ``holds[k]`` steps: every action for every horizon."""
    horizons = tuple(horizons)
    if not horizons or any(not isinstance(h, int) or h < 1 for h in horizons):
        raise ValueError(f"horizons must be whole numbers of steps >= 1, got {horizons!r}")
    return np.tile(np.arange(N_ACTIONS), len(horizons)), np.repeat(np.array(horizons), N_ACTIONS)


def played_by(player: Player) -> Reply:
    """The reply of a player that sees each simulated step's seat (the step itself aside)."""
    return lambda t, seat: player.act(seat)


def _played(seat: Seat, actions: np.ndarray) -> Any:
    return int(actions[0]) if seat.xp is SCALAR else actions


class Searcher(Player):
    """A player that plans on :class:`Branches`: what it remembers is their generator (random models' draws)."""

    branches: Branches

    def get_state(self) -> dict[str, Any]:
        return {"rng": generator_state(self.branches.rng)}

    def set_state(self, state: dict[str, Any]) -> None:
        set_generator_state(self.branches.rng, parts(state, ("rng",), "search")["rng"], "search rng")


class Lookahead(Searcher):
    """Plans each step against ``model`` (a :class:`ballenvs.game.Player`) under the game's
    ``duel_options`` (those of :class:`ballenvs.duel.two_player_game.TwoPlayerDuel`). ``model`` is its own
    copy of the opponent: it is reset before every plan."""

    def __init__(
        self, model: Player, duel_options: Mapping[str, Any], horizons: Sequence[int] = HORIZONS, seed: int = 0
    ) -> None:
        self.model = model
        self.branches = Branches(duel_options, np.random.default_rng(seed))
        self.actions, self.holds = hold_branches(horizons)

    def act(self, seat: Seat) -> Any:
        return _played(seat, self.plan(*seat_view(seat)))

    def plan(self, view: list[np.ndarray], time_left: np.ndarray | None) -> np.ndarray:
        """The best first action of every game whose side sees ``view`` (own ball, then the other's)."""
        self.model.reset(None)
        scores = self.branches.scores(view, time_left, self.actions, self.holds, played_by(self.model))
        return self.actions[scores.argmax(axis=1)].astype(np.int64)

    def reset(self, games: np.ndarray | None) -> None:
        self.model.reset(None)


class Planner(Searcher):
    """The built-in ``planner``: plans every step against no model of its opponent. Each of its
    branches (:data:`PLANNER_HORIZONS` x 9 actions) meets each of the opponent's own hold-and-return
    replies (the same 27) and each of ``models`` (players: the roster's ``planner`` gives it the
    built-in ones named in :data:`PLANNER_MODELS`); it
    plays the first action of the branch with the best worst outcome (its mean counting
    :data:`PLANNER_MEAN_WEIGHT` beside it, to break ties). It keeps no memory between steps, and
    the only randomness it draws is for random models. ``leaf_value`` and ``leaf_weight``: a
    learned value mixed into the score of a branch still running at its end (:class:`Branches`;
    the built-in planner has none)."""

    def __init__(
        self,
        duel_options: Mapping[str, Any],
        horizons: Sequence[int] = PLANNER_HORIZONS,
        models: Sequence[Player] = (),
        seed: int = 0,
        leaf_value: LeafValue | None = None,
        leaf_weight: float = 0.0,
    ) -> None:
        self.branches = Branches(duel_options, np.random.default_rng(seed), leaf_value, leaf_weight)
        self.horizons = tuple(horizons)
        self.actions, self.holds = hold_branches(horizons)
        self.models = list(models)
        # Every (our branch, their reply) pair, ours the slower index.
        count = len(self.actions)
        self.pair_actions, self.pair_holds = np.repeat(self.actions, count), np.repeat(self.holds, count)
        self.reply_actions, self.reply_holds = np.tile(self.actions, count), np.tile(self.holds, count)

    def meeting(self, network: Player) -> Planner:
        """This planner with ``network`` among the players its branches meet, in the learned
        champion's place (expert iteration's search: as many models, so the same work a decision)."""
        models = [model for model in self.models if not isinstance(model, Champion)]
        branches = self.branches
        return Planner(
            branches.options, self.horizons, [*models, network],
            leaf_value=branches.leaf_value, leaf_weight=branches.leaf_weight,
        )  # fmt: skip

    def act(self, seat: Seat) -> Any:
        return _played(seat, self.plan(*seat_view(seat)))

    def act_with_values(self, seat: Seat) -> tuple[np.ndarray, np.ndarray]:
        """A batch's actions, as :meth:`act` plays them, and every action's value (:meth:`evaluate`)."""
        return self.evaluate(*seat_view(seat))

    def plan(self, view: list[np.ndarray], time_left: np.ndarray | None) -> np.ndarray:
        """Each game's first action of the branch whose worst outcome is best."""
        return self.evaluate(view, time_left)[0]

    def evaluate(self, view: list[np.ndarray], time_left: np.ndarray | None) -> tuple[np.ndarray, np.ndarray]:
        """Each game's chosen action (as :meth:`plan`) and every action's value: the best value of
        the branches that start with it (a teacher's soft labels: about half the positions hold
        near-equal best actions, which the chosen action alone does not tell)."""
        games, count = len(view[0]), len(self.actions)
        replies_held = np.tile(self.reply_holds, games)
        replies = np.tile(self.reply_actions, games)
        back_to_centre = self.branches.continuation  # memoryless: the same player serves both sides

        def hold_and_return(t: int, seat: Seat) -> Any:
            return np.where(t < replies_held, replies, back_to_centre.act(seat))

        outcomes = [self.branches.scores(view, time_left, self.pair_actions, self.pair_holds, hold_and_return)]
        for model in self.models:
            model.reset(None)
            scores = self.branches.scores(view, time_left, self.actions, self.holds, played_by(model))
            outcomes.append(scores[:, :, None])
        table = np.concatenate([outcomes[0].reshape(games, count, count), *outcomes[1:]], axis=2)
        value = table.min(axis=2) + PLANNER_MEAN_WEIGHT * table.mean(axis=2)
        per_action = value.reshape(games, -1, N_ACTIONS).max(axis=1)  # branch k holds action k % N_ACTIONS
        return self.actions[value.argmax(axis=1)].astype(np.int64), per_action
