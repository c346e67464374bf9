"""Players for BallDuel: the hand-written heuristics and the adapter for learned policies (the
roster of built-in players, by name, is :mod:`ballenvs.duel.roster`).

Every player (a :class:`ballenvs.game.Player`) acts for one game or a batch from one side's
point of view: its :class:`ballenvs.game.Seat` holds that side's view of the balls (see
:func:`ballenvs.duel.observe.side_view`), and its actions are in that side's frame, which the
game mirrors back for the right player. So a heuristic written for the left ball plays the
right ball unchanged, and a learned policy can play either side.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ballenvs.backend import NUMPY, SCALAR
from ballenvs.directions import MIRRORED_ACTION, N_ACTIONS, heading_to_action
from ballenvs.duel.observe import side_view
from ballenvs.duel.physics import RIGHT, DuelCore, DuelPhysics, DuelState
from ballenvs.game import Player, Seat
from ballenvs.state import copied, fitting_or_none, parts


def _no_thrust(seat: Seat) -> Any:
    return 0 if seat.xp is SCALAR else np.zeros(len(seat.view.own_x), dtype=np.int64)


class Still(Player):
    """Never thrusts: a target to practise on."""

    reads_clock = False

    def act(self, seat: Seat) -> Any:
        return _no_thrust(seat)


class RandomPlayer(Player):
    """Uniformly random actions, drawn from each game's own generator."""

    reads_clock = False

    def act(self, seat: Seat) -> Any:
        rngs = seat.rngs
        if seat.xp is SCALAR:
            return int(rngs[0].integers(N_ACTIONS))
        # One draw per game from that game's generator keeps vector env i identical to a
        # single env with the same seed; the loop is over generators, not over rules.
        return np.array([rng.integers(N_ACTIONS) for rng in rngs], dtype=np.int64)


class Chaser(Player):
    """Thrusts straight at the other ball."""

    reads_clock = False

    def act(self, seat: Seat) -> Any:
        v = seat.view
        return heading_to_action(seat.xp, v.other_x - v.own_x, v.other_y - v.own_y)


class Pusher(Player):
    """Gets between the other ball and the centre, then pushes it outward.

    It steers for the point just inside the other ball on the line from the centre, brakes
    against its own velocity so it does not overshoot, thrusts through the ball once lined
    up behind it, and heads back to the centre when it nears the edge itself.
    """

    reads_clock = False

    def __init__(self, physics: DuelPhysics) -> None:
        self.physics = physics

    def act(self, seat: Seat) -> Any:
        v, p, xp = seat.view, self.physics, seat.xp
        to_x, to_y = v.other_x - v.own_x, v.other_y - v.own_y
        to_norm = xp.maximum(xp.sqrt(to_x * to_x + to_y * to_y), 1e-9)
        other_norm = xp.sqrt(v.other_x * v.other_x + v.other_y * v.other_y)
        # Outward through the other ball; straight at it if it sits on the centre.
        centred = other_norm < 1e-9
        out_x = xp.where(centred, to_x / to_norm, v.other_x / xp.maximum(other_norm, 1e-9))
        out_y = xp.where(centred, to_y / to_norm, v.other_y / xp.maximum(other_norm, 1e-9))
        lined_up = to_x * out_x + to_y * out_y > 0.9 * to_norm
        behind_x = v.other_x - out_x * (2.5 * p.ball_radius)
        behind_y = v.other_y - out_y * (2.5 * p.ball_radius)
        # Aim where we will be in a few steps, not where we are, so as not to overshoot.
        heading_x = xp.where(lined_up, to_x, behind_x - v.own_x - 8 * v.own_vx)
        heading_y = xp.where(lined_up, to_y, behind_y - v.own_y - 8 * v.own_vy)
        near_edge = v.own_x * v.own_x + v.own_y * v.own_y > (0.8 * p.ring_radius) ** 2
        heading_x = xp.where(near_edge, -v.own_x, heading_x)
        heading_y = xp.where(near_edge, -v.own_y, heading_y)
        return heading_to_action(xp, heading_x, heading_y)


class Anchor(Player):
    """Holds the centre: steers for it, braking against its own velocity. On BallSumo-v0, where the
    ball nearer the centre wins at the time limit, an attacker must come and get it."""

    reads_clock = False

    LEAD = 8.0  # steps of its own velocity it allows for, so as not to overshoot the centre

    def act(self, seat: Seat) -> Any:
        v = seat.view
        return heading_to_action(seat.xp, -v.own_x - self.LEAD * v.own_vx, -v.own_y - self.LEAD * v.own_vy)


class Sprinter(Player):
    """An attacker that plans against pusher: every ``REPLAN`` steps it tries each two-part plan
    (one action for ``FIRST`` steps, then one action, ``HORIZON`` steps in all; 81 plans), simulating
    the other ball as :class:`Pusher`, and follows the first part of the plan that scores best (a
    win, sooner the better; else the lead in distance from the centre at the horizon). What it
    finds is pusher's weakness: pusher charges at full speed and turns back only past 0.8 ring
    radii, so a ball that lures it toward the edge, brakes and slips aside sends it out. Against
    a player that does not charge (anchor) the model is wrong, and the plans lose."""

    reads_clock = False

    HORIZON, FIRST, REPLAN = 40, 8, 4

    def __init__(self, physics: DuelPhysics) -> None:
        self.physics = physics
        first, second = np.meshgrid(np.arange(N_ACTIONS), np.arange(N_ACTIONS), indexing="ij")
        self.first, self.second = first.ravel(), second.ravel()
        self.model = Pusher(physics)
        self.actions: np.ndarray | None = None  # each game's current plan's first action
        self.age: np.ndarray | None = None  # steps since each game's plan was made

    def reset(self, games: np.ndarray | None) -> None:
        if games is None:
            self.actions = self.age = None
        elif self.age is not None:
            self.age[games] = self.REPLAN  # a restarted game plans afresh

    def get_state(self) -> dict[str, Any]:
        return {"actions": copied(self.actions), "age": copied(self.age)}

    def set_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("actions", "age"), "sprinter")
        actions = fitting_or_none(self.actions, state["actions"], "sprinter actions")
        age = fitting_or_none(self.age, state["age"], "sprinter age")
        if (actions is None) != (age is None) or (actions is not None and actions.shape != age.shape):
            raise ValueError("state sprinter: actions and age must both be None or arrays of one shape")
        self.actions, self.age = actions, age

    def act(self, seat: Seat) -> Any:
        balls = [np.atleast_1d(np.asarray(field, dtype=np.float64)) for field in seat.view[:8]]
        n = len(balls[0])
        if self.age is None or self.actions is None or len(self.age) != n:
            self.actions, self.age = np.zeros(n, dtype=np.int64), np.full(n, self.REPLAN)
        actions, age = self.actions, self.age
        stale = np.flatnonzero(age >= self.REPLAN)
        if len(stale):
            actions[stale] = self._plan([field[stale] for field in balls])
            age[stale] = 0
        age += 1
        return int(actions[0]) if seat.xp is SCALAR else actions.copy()

    def _plan(self, balls: list[np.ndarray]) -> np.ndarray:
        """The first action of the best plan for each of k games (balls seen from this side)."""
        k, plans = len(balls[0]), len(self.first)
        own_x, own_y, own_vx, own_vy, other_x, other_y, other_vx, other_vy = (np.repeat(b, plans) for b in balls)
        core = DuelCore(self.physics, k * plans)
        core.state = DuelState(own_x, own_y, other_x, other_y, own_vx, own_vy, other_vx, other_vy)
        first, second = np.tile(self.first, k), np.tile(self.second, k)
        score, playing = np.zeros(k * plans), np.ones(k * plans, dtype=bool)
        for t in range(self.HORIZON):
            modelled = Seat(side_view(core.state, RIGHT), NUMPY, no_observation, ())
            theirs = MIRRORED_ACTION[self.model.act(modelled)]
            own_out, other_out = core.step(first if t < self.FIRST else second, theirs)
            ended = playing & (own_out | other_out)
            sooner = 1.0 + (self.HORIZON - t) / self.HORIZON
            score = np.where(ended, (other_out * 1.0 - own_out * 1.0) * sooner, score)
            playing &= ~ended
        own_r, other_r = core.distances_from_centre()
        score = np.where(playing, 0.5 * (other_r - own_r) / self.physics.ring_radius, score)
        return self.first[score.reshape(k, plans).argmax(axis=1)]


def physics_options(physics: DuelPhysics) -> dict[str, float]:
    """The options of :class:`ballenvs.duel.two_player_game.TwoPlayerDuel` that make ``physics``."""
    return {"ring_radius": physics.ring_radius, "ball_radius": physics.ball_radius, "floor_slope": physics.floor_slope}


def no_observation() -> Any:
    raise RuntimeError("a modelled player sees the balls, not an observation")


def stacking_for(policy: Any, frame_space: Any) -> tuple[int, bool]:
    """How a policy that says what it reads (an ``observation_space``, as every stable-baselines3
    model does) sees frames shaped as ``frame_space``: (frames it stacks, channels first). A frame
    stack and a channel order are what a model's training wrappers (SB3's VecFrameStack and
    VecTransposeImage) did; anything else does not fit, said in one line naming what would."""
    wanted = getattr(getattr(policy, "observation_space", None), "shape", None)
    shape = getattr(frame_space, "shape", None)
    if wanted is None or shape is None or tuple(wanted) == tuple(shape):
        return 1, False
    wanted, shape = tuple(wanted), tuple(shape)
    if len(shape) == 3 and len(wanted) == 3:
        height, width, channels = shape
        if wanted[1:] == (height, width) and wanted[0] % channels == 0:
            return wanted[0] // channels, True
        if wanted[:2] == (height, width) and wanted[2] % channels == 0:
            return wanted[2] // channels, False
        size = wanted[1] if wanted[1] == wanted[2] else wanted[0]  # (stack, size, size) or (size, size, stack)
        hint = f"; it was trained on {size}x{size} frames: make the env with obs_size={size}"
    else:
        hint = "; make the env with the obs_type it was trained on (obs_type='state' or 'pixels')"
    raise ValueError(f"opponent model's observation_space {wanted} does not fit this env's observations {shape}{hint}")


class PolicyPlayer(Player):
    """A learned policy: an object with ``predict(obs, deterministic=True) -> (action, state)``
    (any stable-baselines3 model) or a callable ``obs -> action``, fed the side's observation, and
    where the model says it read more (its ``observation_space``: stacked frames, channels first)
    the side's last frames stacked as it was trained on them (:func:`stacking_for`)."""

    def __init__(self, policy: Any, frame_space: Any = None) -> None:
        self.policy = policy
        self.stacked, self.channels_first = stacking_for(policy, frame_space)
        self.stack: np.ndarray | None = None  # (N, H, W, stacked x C): the oldest frame first, zeros before a game's first

    def reset(self, games: np.ndarray | None) -> None:
        if games is None or self.stack is None:
            self.stack = None
        else:
            self.stack[np.asarray(games, dtype=bool)] = 0

    def get_state(self) -> dict[str, Any]:
        return {"stack": copied(self.stack)}

    def set_state(self, state: dict[str, Any]) -> None:
        stack = parts(state, ("stack",), "policy player")["stack"]
        if stack is not None and (not isinstance(stack, np.ndarray) or stack.ndim != 4):
            raise ValueError("state policy player stack: expected None or an (N, H, W, C) array")
        self.stack = None if stack is None else stack.copy()

    def _stacked(self, batch: np.ndarray) -> np.ndarray:
        """The batch's frames pushed onto each game's stack, as the model reads them."""
        if self.stacked == 1:
            return batch
        channels = batch.shape[-1]
        if self.stack is None or len(self.stack) != len(batch):
            self.stack = np.zeros((*batch.shape[:-1], channels * self.stacked), dtype=batch.dtype)
        self.stack = np.concatenate([self.stack[..., channels:], batch], axis=-1)
        return np.ascontiguousarray(self.stack.transpose(0, 3, 1, 2)) if self.channels_first else self.stack

    def act(self, seat: Seat) -> Any:
        xp = seat.xp
        observation = seat.observe()
        batch = self._stacked(observation if xp is NUMPY else observation[None])
        if hasattr(self.policy, "predict"):
            # stable-baselines3 models take a batch of observations and return a batch.
            actions, _ = self.policy.predict(batch, deterministic=True)
        else:
            actions = [self.policy(obs) for obs in batch]
        actions = np.asarray(actions).reshape(len(batch))
        if not np.issubdtype(actions.dtype, np.integer) or ((actions < 0) | (actions >= N_ACTIONS)).any():
            raise ValueError(f"opponent policy {self.policy!r} returned {actions!r}; actions must be integers in 0..8")
        return actions.astype(np.int64) if xp is NUMPY else int(actions[0])
