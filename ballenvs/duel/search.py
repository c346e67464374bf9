"""A search exploiter: a player that plans against a model of its opponent, by simulation.

Approximate exploitability asks how well the best reply to a fixed player does against it. A
learned best response (``python -m agents.exploit``) is one estimate; this is the other: at
every step, for each game, :class:`Lookahead` copies the game into many branches, holds each of
the 9 actions for each of a few horizons and then heads for the centre (as ``anchor`` does),
lets the model play the other side in every branch (one batched call per simulated step, for
all games and branches at once), and takes the first action of the branch that ends best after
the longest horizon: a win (the sooner the better), else no loss, else its ball further inside
the ring than the opponent's. It sees only its seat's view and rebuilds the game from it, in
its own frame (the rules are mirror-symmetric); a model with memory (stacked frames) is
simulated from an empty memory.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from ballenvs.backend import SCALAR
from ballenvs.directions import N_ACTIONS
from ballenvs.duel.core import LEFT, RIGHT, DuelState
from ballenvs.duel.game import LEFT_WINS, RIGHT_WINS, TwoPlayerDuel
from ballenvs.duel.players import Anchor
from ballenvs.game import Player, Seat

#: Steps each branch holds its action for: short ones dodge, long ones find the runs off the edge.
HORIZONS = (3, 8, 16, 30)
WIN, LOSS = 10.0, -10.0  # beyond any difference of the balls' distances from the centre (a few ring radii)


class Lookahead(Player):
    """Plans each step against ``model`` (a :class:`ballenvs.game.Player`) under the game's
    ``duel_options`` (those of :class:`ballenvs.duel.game.TwoPlayerDuel`). ``model`` is its own
    copy of the opponent: it is reset before every plan."""

    def __init__(
        self, model: Player, duel_options: Mapping[str, Any], horizons: Sequence[int] = HORIZONS, seed: int = 0
    ) -> None:
        self.model, self.options, self.horizons = model, dict(duel_options), tuple(horizons)
        self.rng = np.random.default_rng(seed)
        self.continuation = Anchor()  # after its hold, a branch heads back for the centre
        self.game_steps = TwoPlayerDuel(None, **self.options).game_steps
        self._sims: dict[int, TwoPlayerDuel] = {}  # by batch size: built once, its state set at every plan
        # Branch k holds action ACTIONS[k] for HOLDS[k] steps.
        self.actions = np.tile(np.arange(N_ACTIONS), len(self.horizons))
        self.holds = np.repeat(np.array(self.horizons), N_ACTIONS)

    def act(self, seat: Seat) -> Any:
        one = seat.xp is SCALAR
        view = [np.atleast_1d(np.asarray(value, dtype=np.float64)) for value in seat.view[:8]]
        time_left = None if seat.view.time_left is None else np.atleast_1d(np.asarray(seat.view.time_left, dtype=np.float64))
        actions = self.plan(view, time_left)
        return int(actions[0]) if one else actions

    def plan(self, view: list[np.ndarray], time_left: np.ndarray | None) -> np.ndarray:
        """The best first action of every game whose side sees ``view`` (own ball, then the other's)."""
        games, branches = len(view[0]), len(self.actions)
        sim = self._sims.get(games) or self._sims.setdefault(games, TwoPlayerDuel(games * branches, **self.options))
        # Our ball on the left, the opponent's on the right: our frame as the world.
        own_x, own_y, own_vx, own_vy, other_x, other_y, other_vx, other_vy = view
        world = DuelState(own_x, own_y, other_x, other_y, own_vx, own_vy, other_vx, other_vy)
        sim.core.state = DuelState(*(np.repeat(field, branches) for field in world))
        played = np.zeros(games, dtype=np.int64)
        if time_left is not None and sim.clock:
            played = np.rint((1.0 - time_left) * self.game_steps).astype(np.int64)
        sim.core.steps = np.repeat(played, branches)
        ours = np.tile(self.actions, games)
        holds = np.tile(self.holds, games)
        score = np.zeros(games * branches)
        running = np.ones(games * branches, dtype=bool)
        rngs = [self.rng] * (games * branches)
        self.model.reset(None)
        self.continuation.reset(None)
        end = max(self.horizons)
        for t in range(end):
            then = self.continuation.act(sim.seat(LEFT, rngs))
            theirs = self.model.act(sim.seat(RIGHT, rngs))
            _, terminated = sim.play(np.where(t < holds, ours, then), theirs)
            ended = running & terminated
            score = np.where(ended & (sim.winner == LEFT_WINS), WIN - t * 1e-3, score)  # sooner wins rank higher
            score = np.where(ended & (sim.winner == RIGHT_WINS), LOSS + t * 1e-3, score)
            running &= ~terminated
            if not running.any():
                break
        left, right = sim.core.distances_from_centre()
        score = np.where(running, (right - left) / sim.physics.ring_radius, score)
        best = score.reshape(games, branches).argmax(axis=1)
        return self.actions[best].astype(np.int64)

    def reset(self, games: np.ndarray | None) -> None:
        self.model.reset(None)
