"""The rules of BallDuel, once: both players' game (:class:`TwoPlayerDuel`), both sides' actions in
(each in its own, mirrored frame), both sides' rewards and observations out, for one game or N at
once. ``BallDuel-v0`` is this game with the right side driven by an opponent
(:class:`ballenvs.duel.game.DuelGame`); the players and the planner build on it, never the reverse.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces

from ballenvs._checks import MAX_OBS_SIZE, check_bool, check_choice, check_float, check_int, check_pixel_dtype
from ballenvs.backend import NUMPY, SCALAR
from ballenvs.directions import MIRRORED_ACTION, N_ACTIONS
from ballenvs.duel.drawing import draw_duel
from ballenvs.duel.observe import (
    MIN_OBS_SIZE,
    OBS_TYPES,
    PixelObserver,
    SideView,
    StateObserver,
    make_observer,
    side_view,
)
from ballenvs.duel.physics import LEFT, DuelCore, DuelPhysics, DuelState
from ballenvs.game import Player, RenderSpec, Seat
from ballenvs.pixels import FloatPixels
from ballenvs.state import copied, fitting, parts

#: The options of both players' game (BallDuel's, less the opponent).
DUEL_OPTIONS: tuple[str, ...] = ("obs_type", "obs_size", "subpixel", "pixel_dtype", "shaping", "ring_radius", "ball_radius")
DUEL_OPTIONS += ("floor_slope", "time_limit_rule", "game_steps")
#: What decides a game still running after ``game_steps``: nothing (a draw, and the time limit
#: truncates it: BallDuel-v0) or the ball nearer the centre (it terminates with a result: BallSumo-v0).
TIME_LIMIT_RULES = ("draw", "nearer_centre")

#: ``info["winner"]`` and ``info["rewards"]`` (left, right, unshaped) by winner code.
WINNER_NAMES = (None, "left", "right", "draw")
PAIR_REWARDS = ((0.0, 0.0), (1.0, -1.0), (-1.0, 1.0), (0.0, 0.0))
PLAYING, LEFT_WINS, RIGHT_WINS, DRAW = 0, 1, 2, 3
# The same, as object arrays: a batch's infos are what SyncVectorEnv builds from the tuples and names.
_WINNER_NAMES = np.array(WINNER_NAMES, dtype=object)
_PAIR_REWARDS = np.empty(len(PAIR_REWARDS), dtype=object)
_PAIR_REWARDS[:] = PAIR_REWARDS

#: Steps a game lasts at most: the registered time limit.
DEFAULT_GAME_STEPS = 1000
RENDER_SIZE = 400
RENDER_FPS = 30
# The game is scale-free; these bounds keep squared distances far from float overflow and underflow.
RADIUS_RANGE = (1e-6, 1e6)


def _check_radius(name: str, value: Any) -> float:
    radius = check_float(name, value, positive=True)
    low, high = RADIUS_RANGE
    if not low <= radius <= high:
        raise ValueError(f"{name} must be in [{low:g}, {high:g}] (the game is scale-free), got {value!r}")
    return radius


class TwoPlayerDuel:
    """Both players of one game (``num_games=None``: Python floats) or of N games (numpy arrays).

    Each side acts and sees in its own frame: the right player's world is mirrored in x, so
    both see themselves start on the left and one policy can play either side. Rewards are
    zero-sum: +1 to the side whose opponent's centre leaves the ring, -1 to the other, 0 to
    both on a draw (both out in the same step) and while playing; ``shaping=w`` adds
    ``w * (phi' - phi)`` to the left side (and its negative to the right), phi being how much
    further from the centre the right ball is than the left, in ring radii.

    ``floor_slope`` domes the floor (see :class:`ballenvs.duel.physics.DuelPhysics`). With
    ``time_limit_rule="nearer_centre"`` a game still running at step ``game_steps`` ends there
    (terminated) and the ball nearer the centre wins it (exactly level: a draw); the game then
    has a clock, which both observations show (the time left, 1 at the start, 0 at the end).
    """

    def __init__(
        self,
        num_games: int | None = None,
        obs_type: str = "pixels",
        obs_size: int = 64,
        subpixel: bool = False,
        pixel_dtype: str = "uint8",
        shaping: float = 0.0,
        ring_radius: float = 1.0,
        ball_radius: float = 0.1,
        floor_slope: float = 0.0,
        time_limit_rule: str = "draw",
        game_steps: int = DEFAULT_GAME_STEPS,
    ) -> None:
        self.num_games = num_games
        self.obs_type = check_choice("obs_type", obs_type, OBS_TYPES)
        obs_size = check_int("obs_size", obs_size, MIN_OBS_SIZE, MAX_OBS_SIZE)
        self.shaping = check_float("shaping", shaping)
        self.time_limit_rule = check_choice("time_limit_rule", time_limit_rule, TIME_LIMIT_RULES)
        self.game_steps = check_int("game_steps", game_steps, 1, 10**9)
        self.clock = self.time_limit_rule == "nearer_centre"
        slope = check_float("floor_slope", floor_slope)
        self.physics = DuelPhysics(
            ring_radius=_check_radius("ring_radius", ring_radius),
            ball_radius=_check_radius("ball_radius", ball_radius),
            floor_slope=slope,
        )
        self.core = DuelCore(self.physics, num_games)
        self.xp = self.core.xp
        self._mirrored_action = MIRRORED_ACTION if self.xp is NUMPY else MIRRORED_ACTION.tolist()
        subpixel = check_bool("subpixel", subpixel)
        if subpixel and self.obs_type != "pixels":
            raise ValueError(f"subpixel={subpixel!r} applies to obs_type='pixels' only, got obs_type={obs_type!r}")
        self.observer: StateObserver | PixelObserver | FloatPixels
        self.observer, self.observation_space = make_observer(self.physics, obs_type, obs_size, self.clock, subpixel)
        if check_pixel_dtype(pixel_dtype, self.obs_type == "pixels") == "float32":
            self.observer = FloatPixels(self.observer.observe, self.observation_space)
            self.observation_space = self.observer.space
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.winner: Any = PLAYING if num_games is None else np.zeros(num_games, dtype=np.int64)
        self._time_left_at: tuple[Any, Any] = (None, None)  # (the core's steps, the time left they give)

    @property
    def steps(self) -> Any:
        return self.core.steps

    @property
    def rules(self) -> dict[str, Any]:
        """The options that decide a game beyond its physics (what a planner must simulate)."""
        return {"time_limit_rule": self.time_limit_rule, "game_steps": self.game_steps}

    def reset(self, rngs: Sequence[np.random.Generator], games: np.ndarray | None = None) -> None:
        """Restart ``games`` (None: all; else a bool mask); only they draw from their generators."""
        if self.xp is SCALAR:
            self.core.reset(rngs[0].uniform(-1.0, 1.0, size=4).tolist())
            self.winner = PLAYING
            return
        indices = np.arange(len(rngs)) if games is None else np.flatnonzero(games)
        draws = np.empty((len(indices), 4))
        for row, i in zip(draws, indices.tolist()):
            rngs[i].random(out=row)
        # What uniform(-1.0, 1.0) computes from the same draws, bit for bit, for all games at once.
        self.core.reset((-1.0 + 2.0 * draws).T, None if games is None else indices)
        self.winner = np.zeros_like(self.winner) if games is None else np.where(games, PLAYING, self.winner)

    def play(self, left_actions: Any, right_actions: Any) -> tuple[Any, Any]:
        """One step with each side's actions in its own frame; returns ``(left_rewards,
        terminated)`` (the right side's rewards are their negatives) and sets :attr:`winner`."""
        core, xp = self.core, self.xp
        if self.shaping:
            potential_before = self._potential()
        left_out, right_out = core.step(left_actions, self._mirrored_action[right_actions])
        if self.clock:  # at the time limit the ball nearer the centre wins: the other counts as out
            left, right = core.distances_from_centre()
            at_limit = (core.steps >= self.game_steps) & xp.logical_not(left_out | right_out)
            left_out, right_out = left_out | (at_limit & (left >= right)), right_out | (at_limit & (right >= left))
        terminated = left_out | right_out
        # 0 playing, 1 left wins, 2 right wins, 3 draw: the codes of WINNER_NAMES.
        self.winner = right_out * LEFT_WINS + left_out * RIGHT_WINS
        reward = right_out * 1.0 - left_out * 1.0
        if self.shaping:
            # Potential-based, with the potential of a finished game taken as 0, so the
            # optimal policy is unchanged (Ng et al., 1999).
            potential_after = xp.where(terminated, 0.0, self._potential())
            reward = reward + self.shaping * (potential_after - potential_before)
        return reward, terminated

    def get_state(self) -> dict[str, Any]:
        """The balls, each game's step count and result (:mod:`ballenvs.state`)."""
        return {
            "balls": [copied(field) for field in self.core.state],
            "steps": copied(self.core.steps),
            "winner": copied(self.winner),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("balls", "steps", "winner"), "duel")
        balls = state["balls"]
        if not isinstance(balls, list) or len(balls) != len(DuelState._fields):
            raise ValueError(f"state duel balls: expected {len(DuelState._fields)} fields ({', '.join(DuelState._fields)})")
        core = self.core
        fields = [fitting(now, saved, f"duel {name}") for now, saved, name in zip(core.state, balls, DuelState._fields)]
        steps, winner = fitting(core.steps, state["steps"], "duel steps"), fitting(self.winner, state["winner"], "duel winner")
        core.state, core.steps, self.winner = DuelState(*fields), steps, winner

    def time_left(self) -> Any:
        """The share of the game left (1 at the start, 0 at ``game_steps``): a float or an (N,) array."""
        steps, time_left = self._time_left_at
        if steps is not self.core.steps:  # once per step for both sides' views: the core replaces, never mutates, its steps
            time_left = self.xp.maximum(1.0 - self.core.steps / self.game_steps, 0.0)
            self._time_left_at = (self.core.steps, time_left)
        return time_left

    def view(self, side: int, clock: bool = True) -> SideView:
        """Both balls as ``side`` sees them, and the clock with ``clock`` (else None)."""
        return side_view(self.core.state, side, self.time_left() if clock else None)

    def seat(self, side: int, rngs: Sequence[np.random.Generator], player: Player | None = None) -> Seat:
        """What ``player`` (None: any player) of ``side`` gets this step: the clock only if it reads it."""
        return Seat(self.view(side, player is None or player.reads_clock), self.xp, lambda: self.observe(side), rngs)

    def observe(self, side: int = LEFT) -> np.ndarray:
        """The observation of ``side``: egocentric, and mirrored for the right player."""
        return self.observer.observe(self.view(side, self.clock), self.xp)

    def info(self) -> dict[str, Any]:
        """``rewards``: the (left, right) unshaped game rewards; ``winner``: "left", "right", "draw" or None."""
        if self.xp is SCALAR:
            return {"rewards": PAIR_REWARDS[self.winner], "winner": WINNER_NAMES[self.winner]}
        # .take: 10x cheaper than fancy indexing.
        return {"rewards": _PAIR_REWARDS.take(self.winner), "winner": _WINNER_NAMES.take(self.winner)}

    def _potential(self) -> Any:
        """How much further from the centre the right ball is than the left, in ring radii."""
        left, right = self.core.distances_from_centre()
        return (right - left) / self.physics.ring_radius

    def render_spec(self, title: str) -> RenderSpec:
        extent = self.physics.position_bound
        return RenderSpec(RENDER_SIZE, -extent, extent, RENDER_FPS, title)

    def draw(self, canvas: Any, game: int | None) -> None:
        core = self.core
        if game is None:
            state, steps, winner = core.state, core.steps, self.winner
        else:
            state, steps, winner = core.game(game), int(core.steps[game]), int(self.winner[game])
        draw_duel(canvas, state, self.physics, steps, WINNER_NAMES[winner])
