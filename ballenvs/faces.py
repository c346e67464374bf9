"""The gymnasium faces of any :class:`ballenvs.game.Game`: one game as a ``gym.Env``, N games as a
``gymnasium.vector.VectorEnv`` that behaves exactly like ``SyncVectorEnv`` over N single envs.

Each registered env is a two-line subclass naming its game (``game_class``); what differs
between envs is data the game carries: spaces, options, infos, drawing. Env i of a vector env
seeded s plays exactly as a single env seeded s + i: each env draws from its own generator, in
the order the single env would. Time limits live here, not in the games: the single env made
by ``gym.make`` is truncated by gymnasium's ``TimeLimit`` (the registered ``max_episode_steps``,
or the one given to ``gym.make``), a vector env by its ``max_episode_steps`` (which
``gym.make_vec`` passes), and either built by hand by its ``max_episode_steps`` argument.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium.error import ResetNeeded
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ballenvs._checks import check_action, check_int, check_options
from ballenvs.directions import arrow_keys
from ballenvs.game import Game
from ballenvs.render import RENDER_MODES, Renderer, check_render_mode
from ballenvs.state import fitting, generator_state, parts, set_generator_state

AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)

# Envs being reset this step also pass through the batched step (their result is discarded);
# they draw from this throwaway generator so that their own stays untouched.
_DISCARDED = np.random.default_rng(0)


def name_of(env: Any) -> str:
    """The id an env was made as (BallSumo-v0 is BallDuel's game under other rules), else its game's name."""
    spec = getattr(env, "spec", None)
    return spec.id if spec is not None else env.game.NAME


class RenderModes(list):
    """The render modes, as a list that refuses a mode that is not a string with a clear error:
    gym.make checks ``render_mode in metadata["render_modes"]`` before the env is made, and on a
    mode that is not a string would fail further on with an AttributeError of its own."""

    def __contains__(self, mode: object) -> bool:
        check_render_mode(mode)  # a ValueError naming the mode and the valid ones
        return super().__contains__(mode)


def metadata_for(render_fps: int, vector: bool = False) -> dict[str, Any]:
    """A face's class metadata (gym.make reads it before making the env)."""
    metadata: dict[str, Any] = {"render_modes": RenderModes(RENDER_MODES), "render_fps": render_fps}
    return metadata | {"autoreset_mode": AutoresetMode.NEXT_STEP} if vector else metadata


def _time_limit(max_episode_steps: Any, options: dict[str, Any]) -> int | None:
    if "max_steps" in options:
        raise ValueError(
            f"max_steps={options['max_steps']!r}: the time limit is now gymnasium's max_episode_steps "
            "(gym.make(id, max_episode_steps=K), gym.make_vec(id, n, max_episode_steps=K))"
        )
    return None if max_episode_steps is None else check_int("max_episode_steps", max_episode_steps, 1)


#: The options every face takes itself, besides the game's.
FACE_OPTIONS = ("render_mode", "max_episode_steps")


def _make_game(game_class: type[Game], num_games: int | None, options: dict[str, Any]) -> Game:
    check_options(game_class.NAME, options, (*FACE_OPTIONS, *game_class.OPTIONS))
    make: Callable[..., Game] = game_class  # each game's __init__ takes num_games and its options
    return make(num_games, **options)


class GameEnv(gym.Env):
    """One game as a gymnasium ``Env``. Subclasses set ``game_class`` and ``metadata``.

    Args:
        render_mode: None (default: nothing is drawn for people), "rgb_array" or "human".
        max_episode_steps: truncate after this many steps; None (default) leaves it to
            gymnasium's ``TimeLimit``, which ``gym.make`` applies with the registered limit.
        **options: the game's options (``game_class.OPTIONS``).
    """

    game_class: ClassVar[type[Game]]

    def __init__(self, render_mode: str | None = None, max_episode_steps: int | None = None, **options: Any) -> None:
        self.max_episode_steps = _time_limit(max_episode_steps, options)
        self.game = _make_game(self.game_class, None, options)
        self._renderer = Renderer(render_mode, self.game.render_spec)
        self.render_mode = render_mode
        self.observation_space = self.game.observation_space
        self.action_space = self.game.action_space
        self._episode_over: bool | None = None  # None: never reset

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        super().reset(seed=seed)
        if options:
            raise ValueError(f"{name_of(self)} takes no reset options, got {options!r}")
        self.game.reset([self.np_random])
        self._episode_over = False
        if self.render_mode == "human":
            self.render()
        return self.game.observe(), self.game.reset_info()

    def step(self, action: Any) -> tuple[Any, float, bool, bool, dict]:
        if self._episode_over is not False:
            when = "before the first reset()" if self._episode_over is None else "after the episode ended"
            raise ResetNeeded(f"{name_of(self)}: step() called {when}; call reset() first")
        action = check_action(action, int(self.game.action_space.n))
        reward, terminated, info = self.game.step(action, [self.np_random])
        truncated = self.max_episode_steps is not None and self.game.steps >= self.max_episode_steps
        self._episode_over = bool(terminated or truncated)
        if self.render_mode == "human":
            self.render()
        return self.game.observe(), float(reward), bool(terminated), bool(truncated), info

    def render(self) -> np.ndarray | None:
        return self._renderer.render(lambda canvas: self.game.draw(canvas, None))

    def get_keys_to_action(self) -> dict[tuple[int, ...], int]:
        """Arrow keys to actions, for ``gymnasium.utils.play.play`` (two keys for a diagonal)."""
        return arrow_keys()

    def close(self) -> None:
        self._renderer.close()


class GameVectorEnv(VectorEnv):
    """N games as a gymnasium ``VectorEnv``: ``gym.make_vec(id, num_envs=N)``.

    Observations, rewards, flags and infos are those of ``gym.make_vec(id, N,
    vectorization_mode="sync")`` on the same seeds, in every autoreset mode: NEXT_STEP
    (gymnasium's default: an env that ended is reset by the next ``step``, whose action it
    ignores), SAME_STEP (reset at once; the last observation and info in ``final_obs`` and
    ``final_info``) and DISABLED (reset ended envs with ``reset(options={"reset_mask": mask})``).
    ``render()`` draws every env (``render_envs``: the first ones only).

    Args:
        num_envs: how many games.
        render_mode: as the single env's.
        max_episode_steps: as the single env's: each game's own time limit.
        **options: the game's options, as the single env's.
        autoreset_mode: an ``AutoresetMode`` or its value ("NextStep", "SameStep", "Disabled").
        render_envs: how many envs ``render()`` draws in "rgb_array" mode, the first ones (default:
            all; 1 keeps a video of the first env cheap).
    """

    game_class: ClassVar[type[Game]]

    def __init__(
        self,
        num_envs: int = 1,
        render_mode: str | None = None,
        autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP,
        max_episode_steps: int | None = None,
        render_envs: int | None = None,
        **options: Any,
    ) -> None:
        self._renderer: Renderer | None = None  # until the options pass: a refused env closes cleanly (gymnasium's __del__)
        self.num_envs = check_int("num_envs", num_envs, 1)
        self.render_envs = self.num_envs if render_envs is None else check_int("render_envs", render_envs, 1, self.num_envs)
        try:
            mode = AutoresetMode(autoreset_mode)
        except ValueError:
            raise ValueError(
                f"unknown autoreset_mode {autoreset_mode!r}; valid: {', '.join(m.value for m in AUTORESET_MODES)}"
            ) from None
        self.metadata = type(self).metadata | {"autoreset_mode": mode}
        self.autoreset_mode = mode
        self.max_episode_steps = _time_limit(max_episode_steps, options)
        self.game = _make_game(self.game_class, self.num_envs, options)
        self._renderer = Renderer(render_mode, self.game.render_spec)
        self.render_mode = render_mode
        self.single_observation_space = self.game.observation_space
        self.single_action_space = self.game.action_space
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._rngs: list[np.random.Generator] | None = None  # None: never reset
        self._seeds: list[int] = []
        # Envs whose episode ended: reset by the next step (NEXT_STEP), or to be reset by the user (DISABLED).
        self._ended = np.zeros(self.num_envs, dtype=bool)
        self._every_env = np.ones(self.num_envs, dtype=bool)

    # -- seeding -------------------------------------------------------------------------------

    # One seed and one generator per env, as SyncVectorEnv gives them (VectorEnv declares one).
    @property
    def np_random_seed(self) -> tuple[int, ...]:  # type: ignore[override]
        """Each env's seed, as SyncVectorEnv gives them."""
        self._ensure_seeded()
        return tuple(self._seeds)

    @property  # type: ignore[misc]
    def np_random(self) -> tuple[np.random.Generator, ...]:  # type: ignore[override]
        """Each env's generator, as SyncVectorEnv gives them."""
        return tuple(self._ensure_seeded())

    def _ensure_seeded(self) -> list[np.random.Generator]:
        if self._rngs is None:
            self._reseed([None] * self.num_envs, self._every_env)
        assert self._rngs is not None  # made by _reseed
        return self._rngs

    def _reseed(self, seeds: Sequence[int | None], envs: np.ndarray) -> None:
        """New generators, made as a single env makes them from the same seed: for every env the
        first time, then for each env in ``envs`` given a seed (None keeps its generator running)."""
        if self._rngs is None:
            made = [seeding.np_random(seed) for seed in seeds]
            self._rngs, self._seeds = [rng for rng, _ in made], [seed for _, seed in made]
            return
        for i in np.flatnonzero(envs).tolist():
            if seeds[i] is not None:
                self._rngs[i], self._seeds[i] = seeding.np_random(seeds[i])

    def _per_env_seeds(self, seed: int | Sequence[int | None] | None) -> list[int | None]:
        if seed is None:
            return [None] * self.num_envs
        if isinstance(seed, (int, np.integer)):
            return [int(seed) + i for i in range(self.num_envs)]
        seeds = list(seed)
        if len(seeds) != self.num_envs:
            raise ValueError(
                f"reset got {len(seeds)} seeds for {self.num_envs} envs; give one int (env i gets seed + i) or one per env"
            )
        return seeds

    # -- the VectorEnv API ---------------------------------------------------------------------

    def reset(
        self, *, seed: int | Sequence[int | None] | None = None, options: dict[str, Any] | None = None
    ) -> tuple[Any, dict]:
        """Reset every env, or those in ``options["reset_mask"]``. ``seed``: env i gets seed + i (or
        the i-th of a list); None keeps each env's generator running, as a single env's reset does."""
        options = dict(options or {})
        mask = options.pop("reset_mask", None)
        if options:
            raise ValueError(f"{name_of(self)} takes no reset options besides reset_mask, got {options!r}")
        envs = self._every_env if mask is None else self._check_reset_mask(mask)
        self._reseed(self._per_env_seeds(seed), envs)
        self.game.reset(self._ensure_seeded(), None if mask is None else envs)
        self._ended[envs] = False
        return self._observe(), self._sync_info([(self.game.reset_info(), envs)])

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        if self._rngs is None:
            raise ResetNeeded(f"{name_of(self)} vector env: step() called before the first reset(); call reset() first")
        actions = self._check_actions(actions)
        mode, rngs = self.autoreset_mode, self._rngs
        if mode == AutoresetMode.DISABLED and np.count_nonzero(self._ended):
            raise ResetNeeded(
                f"env(s) {np.flatnonzero(self._ended).tolist()} ended and autoreset_mode is Disabled: "
                "reset them with reset(options={'reset_mask': mask}) before stepping"
            )
        resetting = self._ended if mode == AutoresetMode.NEXT_STEP else None
        if resetting is not None and not np.count_nonzero(resetting):  # cheaper than .any() on small arrays
            resetting = None
        active = self._every_env if resetting is None else ~resetting
        step_rngs = rngs
        if resetting is not None:
            step_rngs = list(rngs)
            for i in np.flatnonzero(resetting):
                step_rngs[i] = _DISCARDED
        rewards, terminated, step_info = self.game.step(actions, step_rngs, active)
        if resetting is not None:
            self.game.reset(rngs, resetting)
            rewards, terminated = np.where(resetting, 0.0, rewards), terminated & active
        truncated = self._truncated()  # after the resets: a game just reset is at step 0
        ended = terminated | truncated
        if resetting is not None:
            info = self._sync_info([(step_info, active), (self.game.reset_info(), resetting)])
        elif mode == AutoresetMode.SAME_STEP and np.count_nonzero(ended):
            final_obs = self._per_env(self._observe(), ended)
            self.game.reset(rngs, ended)
            info = self._sync_info([(step_info, ~ended), (self.game.reset_info(), ended)])
            info |= {"final_obs": final_obs, "_final_obs": ended.copy()}
            info |= {"final_info": self._sync_info([(step_info, ended)]), "_final_info": ended.copy()}
        else:
            info = self._sync_info([(step_info, None)])
        if mode != AutoresetMode.SAME_STEP:
            self._ended = ended
        if self.render_mode == "human":
            self.render()
        return self._observe(), rewards, terminated, truncated, info

    def render(self) -> list[np.ndarray] | None:  # type: ignore[override]  # a list, as gymnasium's vector wrappers take it
        """ "rgb_array": a picture of each of the first ``render_envs`` envs (all by default), as
        gymnasium's vector wrappers (RecordVideo, HumanRendering) expect; "human": the first env in
        a window."""
        renderer = self._renderer
        assert renderer is not None  # made by __init__
        if self.render_mode == "human":
            renderer.render(functools.partial(self.game.draw, game=0))
            return None
        frames = [renderer.render(functools.partial(self.game.draw, game=i)) for i in range(self.render_envs)]
        return None if frames[0] is None else [frame for frame in frames if frame is not None]

    def close_extras(self, **kwargs: Any) -> None:
        if self._renderer is not None:
            self._renderer.close()

    # -- games in progress ---------------------------------------------------------------------

    def get_state(self) -> dict[str, Any]:
        """Every env's game in progress, generator and autoreset flag (:mod:`ballenvs.state`): an
        env made with the same arguments goes on from it exactly (:meth:`set_state`), as this one would."""
        rngs = self._ensure_seeded()
        return {
            "game": self.game.get_state(),
            "rngs": [generator_state(rng) for rng in rngs],
            "seeds": list(self._seeds),
            "ended": self._ended.copy(),
        }

    def set_state(self, state: dict[str, Any]) -> None:
        """Go on from :meth:`get_state`'s state of an env made with the same arguments; a state that
        does not fit (another number of envs, another game's) is a ValueError naming what."""
        state = parts(state, ("game", "rngs", "seeds", "ended"), "vector env")
        rngs, seeds = state["rngs"], state["seeds"]
        for name, value in (("rngs", rngs), ("seeds", seeds)):
            if not isinstance(value, list) or len(value) != self.num_envs:
                raise ValueError(f"state {name}: expected a list of {self.num_envs} (one per env), got {value!r:.80}")
        if not all(seed is None or (isinstance(seed, int) and not isinstance(seed, bool)) for seed in seeds):
            raise ValueError(f"state seeds: expected ints or None, got {seeds!r:.80}")
        ended = fitting(self._ended, state["ended"], "ended")
        generators = self._ensure_seeded()
        for i, (rng, saved) in enumerate(zip(generators, rngs)):
            set_generator_state(rng, saved, f"rngs[{i}]")
        self.game.set_state(state["game"])
        self._seeds, self._ended = list(seeds), ended

    # -- pieces --------------------------------------------------------------------------------

    def _observe(self) -> Any:
        return self.game.observe()

    def _truncated(self) -> np.ndarray:
        if self.max_episode_steps is None:
            return np.zeros(self.num_envs, dtype=bool)
        return self.game.steps >= self.max_episode_steps

    def _sync_info(self, parts: list[tuple[dict[str, Any], np.ndarray | None]]) -> dict[str, Any]:
        """The info dict SyncVectorEnv builds when the envs in each part's mask (None: all) report
        that part's info: each key beside a ``_key`` mask of the envs that reported it, and the
        values of the envs that did not left at 0 (None in object arrays)."""
        if len(parts) == 1 and parts[0][1] is None:  # every env reported the same keys: the common step
            info = parts[0][0]
            return info | {f"_{key}": self._every_env.copy() for key in info}
        merged: dict[str, Any] = {}
        for key in dict.fromkeys(key for info, _ in parts for key in info):
            values: Any = None
            reported: Any = None
            for info, envs in parts:
                if key in info:
                    assert envs is not None  # a part for every env is the common step, above
                    given = info[key]
                    rows = envs.reshape(-1, *(1,) * (np.ndim(given) - 1))  # an array per env (info["state"]): whole rows
                    values, reported = (given, envs) if values is None else (np.where(rows, given, values), reported | envs)
            count = np.count_nonzero(reported)
            if count == 0:
                continue
            if count < self.num_envs:
                rows = reported.reshape(-1, *(1,) * (values.ndim - 1))
                values = np.where(rows, values, None if values.dtype == object else values.dtype.type(0))
            merged[key], merged[f"_{key}"] = values, reported.copy()
        return merged

    def _per_env(self, observations: Any, envs: np.ndarray) -> np.ndarray:
        """The observations of ``envs`` one by one in an object array (None elsewhere), as ``final_obs``."""
        per_env = np.full(self.num_envs, None, dtype=object)
        for i in np.flatnonzero(envs):
            if isinstance(observations, dict):
                per_env[i] = {key: value[i] for key, value in observations.items()}
            else:
                per_env[i] = observations[i]
        return per_env

    def _check_reset_mask(self, mask: Any) -> np.ndarray:
        # SyncVectorEnv's checks and error types.
        if not isinstance(mask, np.ndarray):
            raise TypeError(f"`options['reset_mask']` must be a numpy array, got {type(mask)}")
        if mask.shape != (self.num_envs,):
            raise ValueError(f"`options['reset_mask']` must have shape `({self.num_envs},)`, got {mask.shape}")
        if mask.dtype != np.bool_:
            raise TypeError(f"`options['reset_mask']` must have `dtype=np.bool_`, got {mask.dtype}")
        if not mask.any():
            raise ValueError(f"`options['reset_mask']` must contain a boolean array with at least one True value, got {mask}")
        return mask.copy()

    def _check_actions(self, actions: Any) -> np.ndarray:
        n, n_actions = self.num_envs, int(self.game.action_space.n)
        array = np.asarray(actions)
        if array.ndim != 1 or array.dtype.kind not in "iu":
            raise TypeError(f"actions must be a 1-D array of {n} ints, got {actions!r}")
        if array.shape != (n,) or array.min() < 0 or array.max() >= n_actions:
            raise ValueError(f"invalid actions {actions!r}; valid: {n} ints in 0..{n_actions - 1}")
        return array.astype(np.int64)
