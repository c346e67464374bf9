"""UAVGrid as a :class:`ballenvs.game.Game`: options, resets, steps, observations, episode totals,
for one grid or N grids through the same code."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import fields
from typing import Any

import numpy as np
from gymnasium import spaces

from ballenvs._checks import MAX_OBS_SIZE, check_bool, check_choice, check_int, check_pixel_dtype
from ballenvs.directions import N_ACTIONS
from ballenvs.game import Game, RenderSpec
from ballenvs.pixels import FloatPixels
from ballenvs.state import MAX_STEPS, copied, fitting, parts, within
from ballenvs.uav.drawing import draw_uav
from ballenvs.uav.observe import MIN_OBS_SIZE, OBS_TYPES, ImageObserver, VectorObserver
from ballenvs.uav.physics import N_CLASSES, UAVCore, UAVParams, UAVState, make_layout

PARAM_NAMES = tuple(f.name for f in fields(UAVParams))
#: The options of UAVGrid-v0, besides render_mode and max_episode_steps.
OPTIONS = (
    "obs_type",
    "obs_size",
    "channels_last",
    "layout_seed",
    "random_layout",
    "random_start",
    "state_info",
    "pixel_dtype",
    *PARAM_NAMES,
)
# Each grid's request draws are made this many steps at a time: one generator call per default
# episode. Fixed, not the time limit: a single env under gym.make does not know its TimeLimit,
# and the vector env must draw exactly as it does.
REQUEST_BLOCK_STEPS = 300
RENDER_SIZE = 500
RENDER_FPS = 15
DEFAULT_OBS_SIZE = 64


class UAVGame(Game):
    """``num_games=None``: one grid (UAV cell as Python ints); else N grids (arrays).

    ``state_info=True`` adds ``info["state"]``: the grid's state at that moment, exactly (int64,
    :meth:`ballenvs.uav.physics.UAVCore.state_rows`: the UAV's cell, then each UE's cell, request
    class and time left). A teacher that reads the grid (greedy) labels it while its student sees
    the image. Off by default: nothing extra is computed."""

    NAME = "UAVGrid-v0"
    OPTIONS = OPTIONS

    def __init__(
        self,
        num_games: int | None = None,
        obs_type: str = "vector",
        obs_size: int | None = None,
        channels_last: bool = False,
        layout_seed: int = 0,
        random_layout: bool = False,
        random_start: bool = False,
        state_info: bool = False,
        pixel_dtype: str = "uint8",
        **params: Any,
    ) -> None:
        self.params = UAVParams(**params)
        self.obs_type = check_choice("obs_type", obs_type, OBS_TYPES)
        self.random_layout = check_bool("random_layout", random_layout)
        self.random_start = check_bool("random_start", random_start)
        self.state_info = check_bool("state_info", state_info)
        self.num_games = num_games
        self.layout = make_layout(self.params, np.random.default_rng(check_int("layout_seed", layout_seed, 0)))
        self.core = UAVCore(self.params, num_games, fixed_layout=None if self.random_layout else self.layout)
        channels_last = check_bool("channels_last", channels_last)
        if obs_type == "vector":
            for name, value, unset in (("obs_size", obs_size, None), ("channels_last", channels_last, False)):
                if value != unset:
                    raise ValueError(
                        f"{name}={value!r} applies to obs_type='image' only; the vector observation has no picture"
                    )
            check_pixel_dtype(pixel_dtype, False)
            self.observer: VectorObserver | ImageObserver | FloatPixels = VectorObserver(self.params)
        else:
            size = DEFAULT_OBS_SIZE if obs_size is None else obs_size
            size = check_int("obs_size", size, MIN_OBS_SIZE, MAX_OBS_SIZE)
            image = ImageObserver(self.params, size, channels_last)
            self.observer = (
                image if check_pixel_dtype(pixel_dtype, True) == "uint8" else FloatPixels(image.observe, image.space)
            )
        self.observation_space = self.observer.space
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.render_spec = RenderSpec(RENDER_SIZE, 0.0, float(self.params.size), RENDER_FPS, self.NAME)
        self.episode_served: Any = 0 if num_games is None else np.zeros(num_games, dtype=np.int64)
        self.episode_weight: Any = 0.0 if num_games is None else np.zeros(num_games)
        # The requests each grid's UEs raise are drawn a block of steps at a time (one
        # generator call per episode rather than per step), in the same order for a grid of
        # the vector env as for a lone grid. ``_next_step``: the block row the next step uses.
        self._block_steps = REQUEST_BLOCK_STEPS
        n_ues = self.params.n_ues
        if num_games is None:
            self._raised = np.zeros((self._block_steps, n_ues), dtype=np.int64)
            self._any_raised: Any = [False] * self._block_steps  # a list of bools: indexing one is cheap
            self._next_step: Any = 0
        else:
            self._raised = np.zeros((num_games, self._block_steps, n_ues), dtype=np.int64)
            self._next_step = np.zeros(num_games, dtype=np.int64)
            self._block_starts = np.arange(num_games) * self._block_steps  # rows of the flattened blocks

    @property
    def steps(self) -> Any:
        return self.core.steps

    def _draw_start(self, rng: np.random.Generator, block: np.ndarray) -> tuple[Any, ...]:
        """One grid's start, drawn in a fixed order: layout, UAV cell, initial requests, and
        (into ``block``) the uniforms of the first block of steps."""
        p = self.params
        layout = make_layout(p, rng) if self.random_layout else self.layout
        uav_x, uav_y = rng.integers(p.size, size=2).tolist() if self.random_start else (p.size // 2, p.size // 2)
        initial = rng.random((2, p.n_ues))
        rng.random(out=block)
        return uav_x, uav_y, layout[0], layout[1], initial

    def _new_block(self) -> np.ndarray:
        return np.empty((self._block_steps, 2, self.params.n_ues))

    def reset(self, rngs: Sequence[np.random.Generator], games: np.ndarray | None = None) -> None:
        """Restart ``games`` (None: all; else a bool mask); only they draw from their generators."""
        core, p = self.core, self.params
        if self.num_games is None:
            block = self._new_block()
            uav_x, uav_y, ue_x, ue_y, initial = self._draw_start(rngs[0], block)
            core.reset(None, uav_x, uav_y, ue_x, ue_y, core.request_classes(initial, p.initial_request_prob))
            self._set_block(block)
            self.episode_served, self.episode_weight = 0, 0.0
            return
        n, n_ues = self.num_games, p.n_ues
        games = np.ones(n, dtype=bool) if games is None else games
        uav_x, uav_y = np.zeros((n, 1), dtype=np.int64), np.zeros((n, 1), dtype=np.int64)
        ue_x, ue_y = np.zeros((n, n_ues), dtype=np.int64), np.zeros((n, n_ues), dtype=np.int64)
        initial = np.zeros((n, 2, n_ues))
        restarted = np.flatnonzero(games)
        blocks = np.empty((len(restarted), self._block_steps, 2, n_ues))
        for block, i in zip(blocks, restarted.tolist()):
            uav_x[i], uav_y[i], ue_x[i], ue_y[i], initial[i] = self._draw_start(rngs[i], block)
        core.reset(games, uav_x, uav_y, ue_x, ue_y, core.request_classes(initial, p.initial_request_prob))
        self._raised[restarted] = core.request_classes(blocks, p.request_prob)
        self._next_step[restarted] = 0
        # New arrays: the old ones went out in infos.
        self.episode_served = np.where(games, 0, self.episode_served)
        self.episode_weight = np.where(games, 0.0, self.episode_weight)

    def _set_block(self, uniforms: np.ndarray) -> None:
        """One grid's next block of steps."""
        self._raised = self.core.request_classes(uniforms, self.params.request_prob)
        self._any_raised = self._raised.any(-1).tolist()
        self._next_step = 0

    def step(
        self, actions: Any, rngs: Sequence[np.random.Generator], active: np.ndarray | None = None
    ) -> tuple[Any, Any, dict[str, Any]]:
        """Never terminated. Info: ``served`` and ``served_weight`` of the step, ``episode_served``
        and ``episode_weight`` so far."""
        if self.num_games is None:
            if self._next_step == self._block_steps:  # the episode outlasted its block
                self._set_block(rngs[0].random(out=self._new_block()))
            t = self._next_step
            raised = self._raised[t] if self._any_raised[t] else None
            self._next_step = t + 1
        else:
            exhausted = self._next_step == self._block_steps
            if exhausted.any():
                for i in np.flatnonzero(
                    exhausted if active is None else exhausted & active
                ).tolist():  # games being reset need no draws
                    self._raised[i] = self.core.request_classes(
                        rngs[i].random(out=self._new_block()), self.params.request_prob
                    )
                self._next_step[exhausted] = 0
            raised = self._raised.reshape(-1, self.params.n_ues).take(self._block_starts + self._next_step, axis=0)
            self._next_step += 1
        reward, served, weight = self.core.step(actions, raised)
        self.episode_served = self.episode_served + served
        self.episode_weight = self.episode_weight + weight
        if self.num_games is None:
            return float(reward), False, self._info(int(served), float(weight))
        return reward, np.zeros(self.num_games, dtype=bool), self._info(served, weight)

    #: What the games have counted and drawn ahead besides the core's state.
    _PROGRESS = ("episode_served", "episode_weight", "_raised", "_next_step")

    def get_state(self) -> dict[str, Any]:
        core = self.core
        state = {name: copied(getattr(self, name)) for name in self._PROGRESS}
        return state | {"grid": [copied(field) for field in core.state], "steps": copied(core.steps)}

    def set_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("grid", "steps", *self._PROGRESS), "game")
        core, grid = self.core, state["grid"]
        if not isinstance(grid, list) or len(grid) != len(UAVState._fields):
            raise ValueError(f"state grid: expected {len(UAVState._fields)} fields ({', '.join(UAVState._fields)})")
        fields = [fitting(now, saved, f"grid {name}") for now, saved, name in zip(core.state, grid, UAVState._fields)]
        # Cells, request classes and deadlines, as the rules can make them (an index from a file may point anywhere).
        bounds = dict.fromkeys(("uav_x", "uav_y", "ue_x", "ue_y"), self.params.size - 1)
        bounds |= {"request": N_CLASSES, "time_left": max(self.params.deadlines)}
        for value, name in zip(fields, UAVState._fields):
            within(value, 0, bounds[name], f"grid {name}")
        restored = {name: fitting(getattr(self, name), state[name], name) for name in self._PROGRESS}
        within(restored["_raised"], 0, N_CLASSES, "_raised")
        within(restored["_next_step"], 0, self._block_steps, "_next_step")  # a row of the drawn block, or its end
        steps = within(fitting(core.steps, state["steps"], "steps"), 0, MAX_STEPS, "steps")
        core.state, core.steps = UAVState(*fields), steps
        for name, value in restored.items():
            setattr(self, name, value)
        if self.num_games is None:
            self._any_raised = self._raised.any(-1).tolist()

    def _info(self, served: Any, weight: Any) -> dict[str, Any]:
        episode_served, episode_weight = self.episode_served, self.episode_weight
        if self.num_games is None:
            episode_served, episode_weight = int(episode_served), float(episode_weight)
        info = {"served": served, "served_weight": weight, "episode_served": episode_served, "episode_weight": episode_weight}
        if self.state_info:
            info["state"] = self.core.state_rows()
        return info

    def reset_info(self) -> dict[str, Any]:
        if self.num_games is None:
            return self._info(0, 0.0)
        return self._info(np.zeros(self.num_games, dtype=np.int64), np.zeros(self.num_games))

    def observe(self) -> Any:
        return self.observer.observe(self.core)

    def draw(self, canvas: Any, game: int | None) -> None:
        core = self.core
        if game is None:
            draw_uav(canvas, self.params, core.state, core.steps, int(self.episode_served))
        else:
            draw_uav(canvas, self.params, core.grid(game), int(core.steps[game]), int(self.episode_served[game]))
