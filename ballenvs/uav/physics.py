"""UAVGrid rules: a UAV moves on a grid and serves ground users' (UEs') requests.

Written once for one grid (UAV position as Python ints, UE arrays of shape (n_ues,)) or
N grids (UAV (N, 1), UEs (N, n_ues)): the same broadcasting arithmetic serves both, so
the vector env and the single env run the same lines. Randomness is drawn by the caller.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from ballenvs._checks import check_float, check_int
from ballenvs.backend import NUMPY, SCALAR
from ballenvs.directions import STEP_X, STEP_Y

N_CLASSES = 3  # request classes 1..3; 0 is idle
MAX_COVERAGE_TABLE_BYTES = 1 << 24  # size * size * n_ues bools; bigger grids compute distances
MAX_DEADLINE = 100_000  # the image observation keeps a brightness table as long as the longest deadline


@dataclass(frozen=True)
class UAVParams:
    """Grid, users and request process. Distances in cells, times in steps."""

    size: int = 100
    n_ues: int = 10
    speed: int = 2  # cells per step along each axis: the grid is crossed in size / speed steps
    coverage_radius: float = 8.0
    request_prob: float = 0.02  # per idle UE per step
    class_probs: tuple[float, float, float] = (0.5, 0.3, 0.2)
    deadlines: tuple[int, int, int] = (80, 50, 30)  # steps an unserved request of each class lives
    class_weights: tuple[float, float, float] = (1.0, 2.0, 4.0)
    move_cost: float = 0.002  # per step that moves, in reward units (energy)
    n_hotspots: int = 3
    hotspot_spread: float = 5.0  # standard deviation of UEs around their hotspot
    initial_request_prob: float = 0.5  # chance that a UE has a request at reset

    def __post_init__(self) -> None:
        check_int("size", self.size, 2, 100_000)
        check_int("n_ues", self.n_ues, 1, 100_000)
        check_int("speed", self.speed, 1)
        check_float("coverage_radius", self.coverage_radius, positive=True)
        check_int("n_hotspots", self.n_hotspots, 1, 100_000)
        for name in ("request_prob", "initial_request_prob", "move_cost", "hotspot_spread"):
            value = check_float(name, getattr(self, name))
            if value < 0 or (name.endswith("prob") and value > 1):
                raise ValueError(f"{name} must be in {'[0, 1]' if name.endswith('prob') else '[0, inf)'}, got {value!r}")
        probs = np.asarray(self.class_probs, dtype=float)
        if probs.shape != (N_CLASSES,) or (probs < 0).any() or not np.isclose(probs.sum(), 1.0):
            raise ValueError(f"class_probs must be {N_CLASSES} non-negative numbers summing to 1, got {self.class_probs!r}")
        deadlines = np.asarray(self.deadlines)
        valid = np.issubdtype(deadlines.dtype, np.integer) and ((deadlines >= 1) & (deadlines <= MAX_DEADLINE)).all()
        if deadlines.shape != (N_CLASSES,) or not valid:
            raise ValueError(f"deadlines must be {N_CLASSES} ints in 1..{MAX_DEADLINE}, got {self.deadlines!r}")
        weights = np.asarray(self.class_weights, dtype=float)
        if weights.shape != (N_CLASSES,) or not ((weights > 0) & np.isfinite(weights)).all():
            raise ValueError(f"class_weights must be {N_CLASSES} finite positive numbers, got {self.class_weights!r}")


def make_layout(params: UAVParams, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """UE cells (x, y), each (n_ues,) int: clustered round ``n_hotspots`` random hotspots."""
    # Hotspots keep two spreads from the edges, as far as the grid allows: at least one cell is left to draw from.
    size, margin = params.size, min((params.size - 1) // 2, round(2 * params.hotspot_spread))
    hotspots = rng.integers(margin, size - margin, size=(params.n_hotspots, 2), endpoint=False)
    around = hotspots[np.arange(params.n_ues) % params.n_hotspots]
    cells = np.clip(np.rint(around + rng.normal(0.0, params.hotspot_spread, size=(params.n_ues, 2))), 0, size - 1)
    cells = cells.astype(np.int64)
    return cells[:, 0], cells[:, 1]


class UAVState(NamedTuple):
    """One grid: ``uav_x``/``uav_y`` ints, the rest (n_ues,) arrays; N grids: (N, 1) and (N, n_ues)."""

    uav_x: Any
    uav_y: Any
    ue_x: Any
    ue_y: Any
    request: Any  # 0 idle, 1..3 the request class
    time_left: Any  # steps the request has left; 0 when idle


class UAVCore:
    """The state of one grid (``num_games=None``) or of N grids, and the rules that move it.

    ``fixed_layout``: the UE cells (x, y) every grid uses, if they never change; the core then
    looks up which UEs each cell covers in a table instead of computing distances each step.
    """

    def __init__(
        self, params: UAVParams, num_games: int | None = None, fixed_layout: tuple[np.ndarray, np.ndarray] | None = None
    ) -> None:
        self.params = params
        self.num_games = num_games
        self.xp = SCALAR if num_games is None else NUMPY
        lead = () if num_games is None else (num_games,)
        uav = 0 if num_games is None else np.zeros((num_games, 1), dtype=np.int64)
        ues = np.zeros(lead + (params.n_ues,), dtype=np.int64)
        self.state = UAVState(uav, uav, ues, ues, ues, ues)
        self.steps: Any = 0 if num_games is None else np.zeros(num_games, dtype=np.int64)  # an int, or (N,) int64
        # Indexed by request class (0 = idle): normalised so a top-class request is worth 1.
        self.weight_of = np.array([0.0, *params.class_weights]) / max(params.class_weights)
        self.deadline_of = np.array([0, *params.deadlines], dtype=np.int64)
        self._class_thresholds = np.cumsum(params.class_probs)[:-1]
        self._ones = np.ones(params.n_ues)
        # Python ints keep the one-grid UAV position in Python ints (cheaper than numpy scalars).
        step_x, step_y = STEP_X * params.speed, STEP_Y * params.speed
        self._step_x = step_x.tolist() if num_games is None else step_x
        self._step_y = step_y.tolist() if num_games is None else step_y
        self._coverage: np.ndarray | None = None
        if fixed_layout is not None and params.size**2 * params.n_ues <= MAX_COVERAGE_TABLE_BYTES:
            cells = np.arange(params.size)
            self._coverage = self._in_range(cells[:, None, None], cells[None, :, None], *fixed_layout)

    def reset(self, games: Any, uav_x: Any, uav_y: Any, ue_x: Any, ue_y: Any, requests: Any) -> None:
        """Restart ``games`` (None: all, or the one grid; else a bool (N,) mask) with the given UAV
        cell, layout and initial ``requests`` (the class of each UE's request, 0 for idle)."""
        s, xp = self.state, self.xp
        if games is None:
            games = True if self.num_games is None else np.ones(self.num_games, dtype=bool)
        mask = games if self.num_games is None else games[:, None]
        self.state = UAVState(
            xp.where(mask, uav_x, s.uav_x),
            xp.where(mask, uav_y, s.uav_y),
            np.where(mask, ue_x, s.ue_x),
            np.where(mask, ue_y, s.ue_y),
            np.where(mask, requests, s.request),
            np.where(mask, self.deadline_of[requests], s.time_left),
        )
        self.steps = xp.where(games, 0, self.steps)

    def request_classes(self, uniforms: np.ndarray, prob: float) -> np.ndarray:
        """Turn uniforms (..., 2, n_ues) into requests raised: each UE raises one with
        probability ``prob``, of a class drawn by ``class_probs``; 0 where it raises none."""
        raised = uniforms[..., 0, :] < prob
        classes = np.zeros(raised.shape, dtype=np.int64)
        # The class: 1 + how many cumulative class probabilities the draw exceeds.
        classes[raised] = 1 + np.searchsorted(self._class_thresholds, uniforms[..., 1, :][raised])
        return classes

    def grid(self, i: int) -> UAVState:
        """Grid ``i`` of a batch in the one-grid layout (for drawing it)."""
        s = self.state
        return UAVState(int(s.uav_x[i, 0]), int(s.uav_y[i, 0]), s.ue_x[i], s.ue_y[i], s.request[i], s.time_left[i])

    def state_rows(self) -> np.ndarray:
        """The grids' state as int64 numbers, exactly: the UAV's x, y, then each UE's x, y,
        request class and time left, (2 + 4 * n_ues,) for one grid, (N, 2 + 4 * n_ues) for N."""
        s = self.state
        if self.num_games is None:
            return np.concatenate([[s.uav_x, s.uav_y], s.ue_x, s.ue_y, s.request, s.time_left]).astype(np.int64)
        return np.concatenate([s.uav_x, s.uav_y, s.ue_x, s.ue_y, s.request, s.time_left], axis=1).astype(np.int64)

    @classmethod
    def of_rows(cls, params: UAVParams, rows: np.ndarray) -> UAVCore:
        """N grids in the states ``rows`` (N, 2 + 4 * n_ues) of :meth:`state_rows` hold: its inverse."""
        rows = np.asarray(rows, dtype=np.int64)
        n_ues = params.n_ues
        if rows.ndim != 2 or rows.shape[1] != 2 + 4 * n_ues:
            raise ValueError(f"UAV state rows: expected (N, {2 + 4 * n_ues}) for n_ues={n_ues}, got {rows.shape}")
        core = cls(params, len(rows))
        ues = [rows[:, 2 + k * n_ues : 2 + (k + 1) * n_ues] for k in range(4)]
        core.state = UAVState(rows[:, :1], rows[:, 1:2], *ues)
        return core

    def step(self, actions: Any, raised: np.ndarray | None) -> tuple[Any, Any, Any]:
        """Move, serve, expire, raise new requests. ``actions``: int or (N,) ints; ``raised``:
        the class of the request each UE raises this step if it is idle (see
        :meth:`request_classes`), or None when no UE raises one.

        Returns ``(reward, served_count, served_weight)``, each a float/int or (N,) array.
        """
        p, s, xp = self.params, self.state, self.xp
        one = self.num_games is None
        if not one:
            actions = np.asarray(actions)[:, None]  # broadcast against (N, 1) positions
        last = p.size - 1
        uav_x = xp.minimum(xp.maximum(s.uav_x + self._step_x[actions], 0), last)
        uav_y = xp.minimum(xp.maximum(s.uav_y + self._step_y[actions], 0), last)
        if self._coverage is None:
            in_range = self._in_range(uav_x, uav_y, s.ue_x, s.ue_y)
        else:
            in_range = self._coverage[uav_x, uav_y] if one else self._coverage[uav_x[:, 0], uav_y[:, 0]]
        # Requests are served in range; the class of each served request, 0 for the rest.
        served = s.request * in_range
        # Sums over the UEs as products with ones: far cheaper than numpy's reductions over a short last axis.
        served_count = np.count_nonzero(served) if one else ((served != 0) @ self._ones).astype(np.int64)
        # Unserved requests age and expire; idle UEs (time_left 0) stay at 0.
        time_left = s.time_left - 1
        keep = time_left > 0
        if one and not served_count:  # most steps of one grid: nothing in range to serve
            served_weight = 0.0
        else:
            served_weight = self.weight_of.take(served) @ self._ones
            keep &= ~in_range
        request, time_left = s.request * keep, time_left * keep
        if raised is not None:
            new = raised * (request == 0)  # only idle UEs raise a request
            request, time_left = request + new, time_left + self.deadline_of[new]
        self.state = UAVState(uav_x, uav_y, s.ue_x, s.ue_y, request, time_left)
        self.steps = self.steps + 1
        moved = actions != 0 if one else actions[:, 0] != 0
        reward = served_weight - p.move_cost * moved
        return reward, served_count, served_weight

    def _in_range(self, uav_x: Any, uav_y: Any, ue_x: np.ndarray, ue_y: np.ndarray) -> np.ndarray:
        dx, dy = ue_x - uav_x, ue_y - uav_y
        return dx * dx + dy * dy <= self.params.coverage_radius**2
