"""BallDuel physics, written once for one game (Python floats) or N games (numpy arrays).

The core knows nothing of gymnasium: it holds the state of the games, moves them one step
given both players' world-frame actions and says which balls left the ring. Randomness is
drawn by the caller, so one core serves a single env and a vector env with per-env
generators. See :mod:`ballenvs.backend` for why there are two backends.

Coordinates: the ring is centred at the origin, +x is east (the right player's side),
+y is north. The left ball is the learner.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ballenvs.backend import NUMPY, SCALAR
from ballenvs.directions import STEP_X, STEP_Y

LEFT, RIGHT = 0, 1

_STEP_LENGTH = np.maximum(np.hypot(STEP_X, STEP_Y), 1.0)
#: Unit thrust (x, y) of each action; diagonals are no stronger than the axes.
THRUST_X = STEP_X / _STEP_LENGTH
THRUST_Y = STEP_Y / _STEP_LENGTH


@dataclass(frozen=True)
class DuelPhysics:
    """Sizes and dynamics; speeds and thrust are per step, in ring radii."""

    ring_radius: float = 1.0
    ball_radius: float = 0.1
    thrust: float = 0.005  # velocity added per step by a full thrust
    damping: float = 0.95  # fraction of velocity kept per step
    max_speed: float = 0.06  # well below the ball diameter, so balls never pass through
    start_offset: float = 0.5  # start distance from the centre
    start_jitter: float = 0.05  # uniform jitter of each start coordinate
    # A domed floor: each ball is pushed outward by floor_slope * thrust * r per step, r its
    # distance from the centre in ring radii (0: flat, BallDuel-v0).
    floor_slope: float = 0.0

    def __post_init__(self) -> None:
        if not 0 <= self.floor_slope <= 10:
            raise ValueError(f"floor_slope must be in [0, 10], got {self.floor_slope!r}")
        if not 0 < self.ball_radius <= 0.25 * self.ring_radius:
            raise ValueError(
                f"ball_radius must be in (0, ring_radius / 4 = {0.25 * self.ring_radius}], got {self.ball_radius!r}"
            )

    @property
    def speed_cap(self) -> float:
        return self.max_speed * self.ring_radius

    @property
    def position_bound(self) -> float:
        """No centre gets further from the origin than this: a ball inside the ring moves at
        most the speed cap in a step, and a collision pushes it at most one radius further."""
        return self.ring_radius + self.speed_cap + self.ball_radius


class DuelState(NamedTuple):
    """Positions and velocities of both balls; each field a float or an (N,) array."""

    lx: Any
    ly: Any
    rx: Any
    ry: Any
    lvx: Any
    lvy: Any
    rvx: Any
    rvy: Any


class DuelCore:
    """The state of one game (``num_games=None``: Python floats) or of N games (arrays)."""

    def __init__(self, physics: DuelPhysics, num_games: int | None = None) -> None:
        self.physics = physics
        self.num_games = num_games
        self.xp = SCALAR if num_games is None else NUMPY
        zero = 0.0 if num_games is None else np.zeros(num_games)
        self.state = DuelState(*([zero] * 8))
        self.steps: Any = 0 if num_games is None else np.zeros(num_games, dtype=np.int64)  # an int, or (N,) int64
        # Python floats stay Python floats in the scalar backend (numpy scalars are slower).
        self._thrust_x = THRUST_X.tolist() if num_games is None else THRUST_X
        self._thrust_y = THRUST_Y.tolist() if num_games is None else THRUST_Y

    def reset(self, jitter: Any, games: Any = None) -> None:
        """Put ``games`` back at the start: None for all (or the one game), else their indices.

        ``jitter`` holds four uniform draws in [-1, 1] per game, for lx, ly, rx, ry: shape (4,)
        for one game, (4, k) for k games.
        """
        physics, n = self.physics, self.num_games
        offset, spread = physics.start_offset * physics.ring_radius, physics.start_jitter * physics.ring_radius
        start = (-offset + jitter[0] * spread, jitter[1] * spread, offset + jitter[2] * spread, jitter[3] * spread)
        if n is None:
            self.state, self.steps = DuelState(*start, 0.0, 0.0, 0.0, 0.0), 0
        elif games is None:
            self.state = DuelState(*start, *(np.zeros(n) for _ in range(4)))
            self.steps = np.zeros(n, dtype=np.int64)
        else:
            # Copies, so that whoever holds the old state does not see it change.
            fields, steps = [field.copy() for field in self.state], self.steps.copy()
            for field, value in zip(fields, (*start, 0.0, 0.0, 0.0, 0.0)):  # the few restarting: indices beat a mask
                field[games] = value
            steps[games] = 0
            self.state, self.steps = DuelState(*fields), steps

    def step(self, left_action: Any, right_action: Any) -> tuple[Any, Any]:
        """Advance by one step with each ball's world-frame action; say which balls are out."""
        p, xp = self.physics, self.xp
        s = self.state
        thrust, tx, ty = p.thrust * p.ring_radius, self._thrust_x, self._thrust_y
        lvx, lvy = s.lvx * p.damping + tx[left_action] * thrust, s.lvy * p.damping + ty[left_action] * thrust
        rvx, rvy = s.rvx * p.damping + tx[right_action] * thrust, s.rvy * p.damping + ty[right_action] * thrust
        if p.floor_slope:  # skipped on a flat floor, which keeps BallDuel-v0's arithmetic bit for bit
            dome = p.floor_slope * p.thrust  # slope * thrust * (distance / ring radius), outward
            lvx, lvy, rvx, rvy = lvx + dome * s.lx, lvy + dome * s.ly, rvx + dome * s.rx, rvy + dome * s.ry
        lvx, lvy, rvx, rvy = _cap_both(xp, lvx, lvy, rvx, rvy, p.speed_cap)
        lx, ly, rx, ry = s.lx + lvx, s.ly + lvy, s.rx + rvx, s.ry + rvy
        dx, dy = rx - lx, ry - ly
        dist2 = dx * dx + dy * dy
        touching = dist2 < (2 * p.ball_radius) ** 2
        if xp.any(touching):  # rare: computed for the touching games only, written into this step's new arrays
            balls = xp.update_where(touching, self._collide, (lx, ly, rx, ry, lvx, lvy, rvx, rvy), (dx, dy, dist2))
            lx, ly, rx, ry, lvx, lvy, rvx, rvy = balls
        self.state = DuelState(lx, ly, rx, ry, lvx, lvy, rvx, rvy)
        self.steps = self.steps + 1
        ring2 = p.ring_radius**2
        return lx * lx + ly * ly > ring2, rx * rx + ry * ry > ring2

    def _collide(
        self, lx: Any, ly: Any, rx: Any, ry: Any, lvx: Any, lvy: Any, rvx: Any, rvy: Any, dx: Any, dy: Any, dist2: Any
    ) -> tuple:
        """Bounce two touching balls off each other and push them apart."""
        p, xp = self.physics, self.xp
        dist = xp.sqrt(dist2)
        safe_dist = xp.maximum(dist, 1e-12)
        nx, ny = dx / safe_dist, dy / safe_dist
        coincident = dist <= 1e-12
        if xp.any(coincident):  # no line between the centres: push apart along x
            nx, ny = xp.where(coincident, 1.0, nx), xp.where(coincident, 0.0, ny)
        # Elastic, equal masses: the balls swap their velocity components along the line of
        # centres, if they are closing; then they are pushed apart to touching.
        closing = (rvx - lvx) * nx + (rvy - lvy) * ny
        swap = xp.where(closing < 0, closing, 0.0)
        kick_x, kick_y = swap * nx, swap * ny
        lvx, lvy, rvx, rvy = lvx + kick_x, lvy + kick_y, rvx - kick_x, rvy - kick_y
        push = (2 * p.ball_radius - dist) / 2
        shift_x, shift_y = push * nx, push * ny
        lx, ly, rx, ry = lx - shift_x, ly - shift_y, rx + shift_x, ry + shift_y
        # A swap can leave one ball faster than the cap; the cap is absolute.
        lvx, lvy, rvx, rvy = _cap_both(xp, lvx, lvy, rvx, rvy, p.speed_cap)
        return lx, ly, rx, ry, lvx, lvy, rvx, rvy

    def game(self, i: int) -> DuelState:
        """Game ``i`` of a batch as Python floats (for drawing it)."""
        return DuelState(*(float(field[i]) for field in self.state))

    def distances_from_centre(self) -> tuple[Any, Any]:
        s, xp = self.state, self.xp
        return xp.sqrt(s.lx * s.lx + s.ly * s.ly), xp.sqrt(s.rx * s.rx + s.ry * s.ry)


def _cap(xp: Any, vx: Any, vy: Any, cap: float) -> tuple[Any, Any]:
    """Scale (vx, vy) down to at most ``cap`` in length."""
    scale = xp.minimum(1.0, cap / xp.sqrt(xp.maximum(vx * vx + vy * vy, 1e-24)))
    return vx * scale, vy * scale


def _cap_both(xp: Any, lvx: Any, lvy: Any, rvx: Any, rvy: Any, cap: float) -> tuple[Any, Any, Any, Any]:
    """Both balls' velocities capped: over N games, as one (2N,) computation (numpy's cost per call,
    not per game, dominates at these sizes; elementwise, so the same numbers bit for bit)."""
    if xp is not NUMPY:
        return (*_cap(xp, lvx, lvy, cap), *_cap(xp, rvx, rvy, cap))
    n = len(lvx)
    vx, vy = _cap(xp, np.concatenate((lvx, rvx)), np.concatenate((lvy, rvy)), cap)
    return vx[:n], vy[:n], vx[n:], vy[n:]
