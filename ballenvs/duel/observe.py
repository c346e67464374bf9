"""What a BallDuel player sees: a state vector or a small pixel frame, for a batch of games.

Both are egocentric: a player's own ball is "own", the other is "other", and the right
player sees the world mirrored in x, so that both players see themselves start on the
left. One policy can therefore play either side.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np
from gymnasium import spaces

from ballenvs.backend import SCALAR
from ballenvs.duel.physics import LEFT, DuelPhysics, DuelState

OBS_TYPES = ("pixels", "state")
MIN_OBS_SIZE = 36  # the smallest image stable-baselines3's NatureCNN accepts

# Pixel intensities: your own ball is the brightest thing in the frame; the clock's bar (games
# decided at the time limit) runs along the top, outside the ring.
OUTSIDE, FLOOR, EDGE, OTHER_BALL, CLOCK, OWN_BALL = 0, 40, 100, 150, 200, 255
#: Rows of the clock's bar at most (fewer if the ring leaves fewer rows free at the top).
CLOCK_ROWS = 2


class SideView(NamedTuple):
    """Both balls seen from one side: own ball first, x mirrored for the right player.
    Each field is a float (one game) or an (N,) array."""

    own_x: Any
    own_y: Any
    own_vx: Any
    own_vy: Any
    other_x: Any
    other_y: Any
    other_vx: Any
    other_vy: Any
    time_left: Any = None  # share of the game left, 1 -> 0 (None: not known)


def side_view(state: DuelState, side: int, time_left: Any = None) -> SideView:
    s = state
    if side == LEFT:
        return SideView(s.lx, s.ly, s.lvx, s.lvy, s.rx, s.ry, s.rvx, s.rvy, time_left)
    return SideView(-s.rx, s.ry, -s.rvx, s.rvy, -s.lx, s.ly, -s.lvx, s.lvy, time_left)


def state_of_view(view: SideView) -> np.ndarray:
    """A side's view as numbers, exactly (float64, world units): own x, y, vx, vy, the other's x,
    y, vx, vy, and the time left where the view has a clock; (d,) for one game, (N, d) for N."""
    fields = [value for value in view if value is not None]
    return np.array(fields, dtype=np.float64).T


def view_of_state(states: np.ndarray) -> SideView:
    """The views (N, d) rows of :func:`state_of_view` hold: its inverse, bit for bit."""
    c = np.asarray(states, dtype=np.float64).T  # the 8 balls' columns, then the clock's if there is one
    return SideView(c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7], c[8] if len(c) > 8 else None)


class StateObserver:
    """float32 vector of 10: own x, y, vx, vy, other x, y, vx, vy, own and other distance to the
    edge; with a ``clock``, 11: the share of the game left last.

    Positions and distances to the edge (negative once outside) are in ring radii,
    velocities in units of the speed cap.
    """

    def __init__(self, physics: DuelPhysics, clock: bool = False) -> None:
        self.physics, self.clock = physics, clock
        pos_bound = physics.position_bound / physics.ring_radius
        # Velocities are capped at 1; the margin absorbs float rounding at the cap.
        vel_bound = 1.0 + 1e-4
        bounds = [pos_bound] * 2 + [vel_bound] * 2 + [pos_bound] * 2 + [vel_bound] * 2 + [1.0, 1.0] + [1.0] * clock
        high = np.array(bounds, dtype=np.float32)
        low = -high
        low[8:10] = 1.0 - pos_bound
        low[10:] = 0.0
        self.low, self.high = low, high

    def observe(self, view: SideView, xp: Any) -> np.ndarray:
        inv_ring, inv_speed = 1.0 / self.physics.ring_radius, 1.0 / self.physics.speed_cap
        v = view
        features = [
            v.own_x * inv_ring,
            v.own_y * inv_ring,
            v.own_vx * inv_speed,
            v.own_vy * inv_speed,
            v.other_x * inv_ring,
            v.other_y * inv_ring,
            v.other_vx * inv_speed,
            v.other_vy * inv_speed,
            1.0 - xp.sqrt(v.own_x * v.own_x + v.own_y * v.own_y) * inv_ring,
            1.0 - xp.sqrt(v.other_x * v.other_x + v.other_y * v.other_y) * inv_ring,
        ]
        if self.clock:
            features.append(v.time_left)
        # (10,) for one game; (10, N) for N games, transposed to (N, 10). .T of 1-D is a no-op.
        return np.array(features, dtype=np.float32).T

    def states_of(self, observations: Any) -> np.ndarray:
        """The states (N, 8, or 9 with the clock: :func:`state_of_view`'s rows) whose observations
        :meth:`observe` made, its scaling undone (to float32's precision); the edges, which the
        positions give, dropped. For players that read the game, handed a side's observation."""
        rows = np.atleast_2d(np.asarray(observations, dtype=np.float64))
        ring, speed = self.physics.ring_radius, self.physics.speed_cap
        states = rows[:, :8] * np.array([ring, ring, speed, speed] * 2)
        return np.concatenate([states, rows[:, 10:11]], axis=1) if self.clock else states


def make_observer(
    physics: DuelPhysics, obs_type: str, obs_size: int, clock: bool = False, subpixel: bool = False
) -> tuple[StateObserver | PixelObserver, spaces.Box]:
    """The observer of an observation type, and one game's observation space; ``clock``: show the
    time left; ``subpixel``: pixel frames with the balls' edges drawn by the share of each pixel covered."""
    if obs_type == "pixels":
        return PixelObserver(physics, obs_size, clock, subpixel), spaces.Box(0, 255, (obs_size, obs_size, 1), np.uint8)
    observer = StateObserver(physics, clock)
    return observer, spaces.Box(observer.low, observer.high, dtype=np.float32)


class PixelObserver:
    """(N, size, size, 1) uint8 frames: the ring, the other ball and your own ball (brightest);
    with a ``clock``, a bar along the top rows (outside the ring) as long as the share of the
    game left, from the left edge (all of the width at the start, none at the end).

    The static ring is drawn once; each step copies it and stamps two precomputed discs,
    so a frame costs a few small numpy operations rather than a renderer.

    With ``subpixel``, a pixel on a ball's edge is blended with what lies under it by the share of
    it the ball covers (approximated from its centre's distance to the rim, clipped to [0, 1]): a
    ball moving less than a pixel changes the frame, so velocity reads from two frames even when
    the ball moves slowly.
    """

    def __init__(self, physics: DuelPhysics, size: int, clock: bool = False, subpixel: bool = False) -> None:
        self.size, self.subpixel = size, subpixel
        ring = physics.ring_radius
        self.extent = physics.position_bound  # the frame spans [-extent, extent] in x and y
        self.scale = size / (2 * self.extent)  # pixels per world unit
        centres = (np.arange(size) + 0.5) / self.scale - self.extent
        radius = np.hypot(centres[None, :], centres[:, None])
        edge_halfwidth = max(0.75 / self.scale, 0.02 * ring)
        background = np.full((size, size), OUTSIDE, dtype=np.uint8)
        background[radius <= ring] = FLOOR
        background[np.abs(radius - ring) <= edge_halfwidth] = EDGE
        self.background = background
        r_px = physics.ball_radius * self.scale
        reach = int(np.ceil(r_px))
        dy, dx = np.mgrid[-reach : reach + 1, -reach : reach + 1]
        self._disc = dx**2 + dy**2 <= r_px**2 + 0.5  # + 0.5 keeps tiny balls at least a plus sign
        self._reach = reach
        self._disc_dy, self._disc_dx = dy[self._disc], dx[self._disc]
        self._radius_px = r_px
        # Sub-pixel: every pixel a ball can touch in part (one ring of pixels beyond the disc's reach).
        ay, ax = np.mgrid[-reach - 1 : reach + 2, -reach - 1 : reach + 2]
        self._area_dy, self._area_dx = ay.ravel(), ax.ravel()
        free_rows = int(np.argmax((background != OUTSIDE).any(axis=1)))  # rows above the ring's edge
        self.clock_rows = min(CLOCK_ROWS, free_rows) if clock else 0
        self._columns = np.arange(size)

    def observe(self, view: SideView, xp: Any) -> np.ndarray:
        """One frame (size, size, 1) for one game; (N, size, size, 1) for N games."""
        if xp is SCALAR and self.subpixel:  # the batched drawing, for a batch of one
            batch = SideView(*(None if value is None else np.array([value]) for value in view))
            return self.observe(batch, np)[0]
        if xp is SCALAR:
            frame = self.background[:, :, None].copy()
            if self.clock_rows:
                frame[: self.clock_rows, : round(view.time_left * self.size), 0] = CLOCK
            self._stamp_one(frame, view.other_x, view.other_y, OTHER_BALL)
            self._stamp_one(frame, view.own_x, view.own_y, OWN_BALL)
            return frame
        frames = np.empty((len(view.own_x), self.size, self.size, 1), dtype=np.uint8)
        frames[..., 0] = self.background
        if self.clock_rows:
            bar = self._columns < np.round(view.time_left * self.size)[:, None]  # (N, size)
            frames[:, : self.clock_rows, :, 0] = np.where(bar[:, None, :], CLOCK, OUTSIDE)
        self._stamp_many(frames, view.other_x, view.other_y, OTHER_BALL)
        self._stamp_many(frames, view.own_x, view.own_y, OWN_BALL)
        return frames

    def _pixel(self, x: Any, y: Any) -> tuple[Any, Any]:
        """Row and column (floats, to be floored) of the pixel holding world (x, y)."""
        return (self.extent - y) * self.scale, (x + self.extent) * self.scale

    def _stamp_one(self, frame: np.ndarray, x: float, y: float, value: int) -> None:
        """Draw one ball with a slice and the disc mask: a few numpy calls, not an index array."""
        row, col = self._pixel(x, y)
        reach, size = self._reach, self.size
        top, left = math.floor(row) - reach, math.floor(col) - reach
        bottom, right = top + 2 * reach + 1, left + 2 * reach + 1
        clip_top, clip_left = max(top, 0), max(left, 0)
        clip_bottom, clip_right = min(bottom, size), min(right, size)
        if clip_top >= clip_bottom or clip_left >= clip_right:
            return  # entirely outside the frame
        disc = self._disc[clip_top - top : clip_bottom - top, clip_left - left : clip_right - left]
        frame[clip_top:clip_bottom, clip_left:clip_right, 0][disc] = value

    def _stamp_many(self, frames: np.ndarray, x: np.ndarray, y: np.ndarray, value: int) -> None:
        """Draw one ball per frame: the disc's pixel offsets, clipped to the frame."""
        if self.subpixel:
            self._blend_many(frames, x, y, value)
            return
        row, col = self._pixel(x, y)
        rows = np.floor(row).astype(np.int64)[:, None] + self._disc_dy
        cols = np.floor(col).astype(np.int64)[:, None] + self._disc_dx
        visible = (rows >= 0) & (rows < self.size) & (cols >= 0) & (cols < self.size)
        games = np.broadcast_to(np.arange(len(x))[:, None], rows.shape)
        frames[games[visible], rows[visible], cols[visible], 0] = value

    def _blend_many(self, frames: np.ndarray, x: np.ndarray, y: np.ndarray, value: int) -> None:
        """Draw one ball per frame, each pixel it touches blended by the share it covers."""
        row, col = self._pixel(x, y)
        rows = np.floor(row).astype(np.int64)[:, None] + self._area_dy
        cols = np.floor(col).astype(np.int64)[:, None] + self._area_dx
        distance = np.hypot(rows + 0.5 - row[:, None], cols + 0.5 - col[:, None])
        cover = np.clip(self._radius_px - distance + 0.5, 0.0, 1.0)
        touched = (cover > 0) & (rows >= 0) & (rows < self.size) & (cols >= 0) & (cols < self.size)
        games = np.broadcast_to(np.arange(len(x))[:, None], rows.shape)[touched]
        rows, cols, cover = rows[touched], cols[touched], cover[touched]
        under = frames[games, rows, cols, 0]
        frames[games, rows, cols, 0] = np.rint(under + cover * (value - under.astype(np.float64))).astype(np.uint8)
