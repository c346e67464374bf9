"""Teachers and their labels, for the learners taught by a player (:mod:`agents.algorithms.distill`,
:mod:`agents.algorithms.kickstart`): the player, model or reference policy that labels each state
the student's envs report (``info["state"]``, the env option ``state_info=True``), the checks that
it can teach on a run's env, and the bounded buffer of labelled frames.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F

from agents.artifacts.model_players import model_player
from agents.artifacts.models import find_model, load_run_model
from agents.artifacts.runs import read_config
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import TeacherGame, Teaching
from agents.common.errors import UsageError
from agents.session.opponents import known
from ballenvs.directions import N_ACTIONS
from ballenvs.game import Player
from ballenvs.reference import Arena, reference_for
from ballenvs.state import generator_state, set_generator_state

#: The env option that puts the learner's state into its info, and the info key it fills.
STATE_OPTION, STATE_KEY = "state_info", "state"
#: The options that change the game a state model learned (its units, its floor, its clock).
_RULE_OPTIONS = ("ring_radius", "ball_radius", "floor_slope", "time_limit_rule", "game_steps")


class PlayerTeacher:
    """A player of the game labels the states: its actions, or its action values where it has them."""

    def __init__(self, name: str, game: TeacherGame, temperature: float, seed: int, network: Player | None = None) -> None:
        self.arena = arena_of(game)
        self.options = {key: value for key, value in game.env_kwargs.items() if key != "opponent"}
        self.player = self.arena.make_player(name, self.options)
        if network is not None:
            meeting = getattr(self.player, "meeting", None)  # a search that meets players in its branches
            if meeting is None:
                raise UsageError(
                    f"teacher_network: a network goes into a planner's search; teacher {name!r} is not a planner "
                    "(planner, or planner:H/H/...)"
                )
            self.player = meeting(network)
        self.temperature = temperature
        self.rng = np.random.default_rng(seed)

    def label(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each state's action and the target distribution over the actions, (N,) and (N, A)."""
        seat = self.arena.state_seat(states, self.options, self.rng)
        if hasattr(self.player, "act_with_values"):
            actions, values = self.player.act_with_values(seat)
            return np.asarray(actions, dtype=np.int64), softmax(values, self.temperature)
        actions = np.asarray(self.player.act(seat), dtype=np.int64)
        return actions, np.eye(N_ACTIONS, dtype=np.float32)[actions]

    def reset(self, games: np.ndarray) -> None:
        self.player.reset(games)


class PolicyTeacher:
    """A one-player game's reference policy labels the states with its actions."""

    def __init__(self, act: Callable[[np.ndarray], np.ndarray]) -> None:
        self.act = act

    def label(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        actions = self.act(states)
        return actions, np.eye(N_ACTIONS, dtype=np.float32)[actions]

    def reset(self, games: np.ndarray) -> None:
        """A reference policy of ours reads the state alone."""


class ModelTeacher:
    """A model trained on the state labels the states with its Q-values."""

    def __init__(self, path: str, game: TeacherGame, temperature: float, device: str) -> None:
        model, run_dir = check_model_teacher(path, game)
        self.q = load_run_model(model, run_dir, device)[0].q_net
        self.arena, self.options = arena_of(game), dict(game.env_kwargs)
        self.device, self.temperature = torch.device(device), temperature

    def label(self, states: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        observations = self.arena.state_observation(states, self.options)  # what it was trained on
        with torch.inference_mode():
            values = self.q(torch.as_tensor(observations, device=self.device)).float().cpu().numpy()
        return values.argmax(axis=1), softmax(values, self.temperature)

    def reset(self, games: np.ndarray) -> None:
        """A state model keeps no memory."""


def arena_of(game: TeacherGame) -> Arena:
    arena = reference_for(game.env_id).arena
    if arena is None:
        raise UsageError(f"a teacher plays a two-player game's side; {game.env_id} has none")
    return arena


def softmax(values: np.ndarray, temperature: float) -> np.ndarray:
    scaled = np.asarray(values, dtype=np.float64) / temperature
    scaled -= scaled.max(axis=1, keepdims=True)
    weights = np.exp(scaled)
    return (weights / weights.sum(axis=1, keepdims=True)).astype(np.float32)


def policy_cross_entropy(logits: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """H(targets, softmax(logits)), the mean over the batch: KL to the teacher's policy up to a constant."""
    return -(targets * F.log_softmax(logits, dim=1)).sum(dim=1).mean()


def check_model_teacher(path: str, game: TeacherGame) -> tuple[Path, Path]:
    """A model file or run folder that can teach on ``game``: one of the same env, on its state."""
    try:
        model, run_dir = find_model(path)
    except UsageError as error:
        raise UsageError(f"teacher {path!r}: {error}") from None
    config = read_config(run_dir)
    hyper = config.get("hyperparams") or {}
    kwargs = dict(hyper.get("env_kwargs") or {})
    if config.get("env_id") != game.env_id:
        raise UsageError(f"teacher {path!r} plays {config.get('env_id')!r}; this student plays {game.env_id}")
    if kwargs.get("obs_type") != "state" or (hyper.get("frame_stack") or 1) != 1:
        raise UsageError(
            f"teacher {path!r} sees obs_type={kwargs.get('obs_type', 'pixels')!r}"
            f"{' stacked' if (hyper.get('frame_stack') or 1) > 1 else ''}; a teacher sees one state "
            "(a model trained with obs_type=state, no frame stack), or is a built-in player"
        )
    differ = [key for key in _RULE_OPTIONS if kwargs.get(key) != game.env_kwargs.get(key)]
    if differ:
        raise UsageError(f"teacher {path!r} was trained with other {', '.join(differ)} than this student's env")
    return model, run_dir


def make_teacher(config: Teaching, device: str, seed: int) -> PlayerTeacher | ModelTeacher | PolicyTeacher:
    """The teacher ``config.teacher`` names, or one line saying why it cannot teach here."""
    game, name = config.game, config.teacher
    reference = reference_for(game.env_id)
    if reference.arena is None:
        if config.teacher_network:
            raise UsageError(f"teacher_network: a network goes into a planner's search; {game.env_id} has no planner")
        if name not in reference.state_policies:
            policies = ", ".join(reference.state_policies) or "none"
            raise UsageError(
                f"teacher {name!r}: {game.env_id} is a one-player game, taught by a reference policy that "
                f"reads its state: {policies}"
            )
        return PolicyTeacher(reference.state_policies[name](game.env_kwargs))
    arena = reference.arena
    if known(reference, name, "teacher"):
        network = search_network(config.teacher_network, game, device) if config.teacher_network else None
        return PlayerTeacher(name, game, config.temperature, seed, network)
    if not Path(name).exists():
        raise UsageError(
            f"teacher {name!r}: none of {game.env_id}'s built-in players ({', '.join(arena.players)}), "
            "nor a model file or run folder"
        )
    if config.teacher_network:
        raise UsageError(f"teacher_network: a network goes into a planner's search; teacher {name!r} is a model")
    return ModelTeacher(name, game, config.temperature, device)


def search_network(path: str, game: TeacherGame, device: str) -> Player:
    """The model ``path`` names as a player of ``game``, for a planner teacher's search to meet."""
    try:
        model, run_dir = find_model(path)
        env_id = read_config(run_dir).get("env_id")
        if env_id != game.env_id:
            raise UsageError(f"plays {env_id!r}; this student plays {game.env_id}")
        return model_player(model, run_dir, device, arena_of(game))
    except UsageError as error:  # each refusal under the key's name
        raise UsageError(f"teacher_network {path!r}: {error}") from None


def check_teaching(config: Teaching, section: Section, action_space: Any) -> None:
    """The teacher ``config`` names can teach on ``section``'s env, which reports the state it
    reads; ``config.game`` is set to that env."""
    if int(action_space.n) != N_ACTIONS:
        raise UsageError(f"a teacher labels the duel's {N_ACTIONS} actions; {section.env_id} has {action_space.n}")
    if section.env_kwargs.get(STATE_OPTION) is not True:
        raise UsageError(
            f"the teacher reads the state the env reports; add --env-kwargs {STATE_OPTION}=true (the shipped sections have it)"
        )
    config.game = TeacherGame(section.env_id, dict(section.env_kwargs))
    make_teacher(config, "cpu", 0)  # refused here, before any folder, if it cannot teach


class LabelBuffer:
    """The last ``capacity`` labelled frames (stacks, as the student sees them) in host arrays."""

    def __init__(self, capacity: int, observation_space: Any, device: Any, seed: int | None = None) -> None:
        self.capacity, self.device = capacity, torch.device(device)
        self.observations = np.zeros((capacity, *observation_space.shape), dtype=observation_space.dtype)
        self.targets = np.zeros((capacity, N_ACTIONS), dtype=np.float32)
        self.actions = np.zeros(capacity, dtype=np.int64)
        self.position, self.size = 0, 0
        self.rng = np.random.default_rng(seed)

    def __len__(self) -> int:
        return self.size

    def add(self, observations: np.ndarray, targets: np.ndarray, actions: np.ndarray) -> None:
        rows = (self.position + np.arange(len(actions))) % self.capacity
        self.observations[rows], self.targets[rows], self.actions[rows] = observations, targets, actions
        self.position = int((self.position + len(actions)) % self.capacity)
        self.size = min(self.size + len(actions), self.capacity)

    def sample(self, batch_size: int) -> tuple[torch.Tensor, torch.Tensor]:
        rows = self.rng.integers(self.size, size=batch_size)
        return (
            torch.as_tensor(self.observations[rows], device=self.device),
            torch.as_tensor(self.targets[rows], device=self.device),
        )

    def sampler_state(self) -> Any:
        return generator_state(self.rng)

    def set_sampler_state(self, state: Any) -> None:
        set_generator_state(self.rng, state, "label buffer rng")

    def save(self, path: Path) -> None:
        """The labelled frames as an .npz (no pickle), oldest first."""
        order = (self.position - self.size + np.arange(self.size)) % self.capacity
        with open(path, "wb") as file:
            np.savez(file, observations=self.observations[order], targets=self.targets[order], actions=self.actions[order])

    def load(self, path: Path, num_envs: int) -> None:
        with np.load(path, allow_pickle=False) as saved:
            observations, targets, actions = saved["observations"], saved["targets"], saved["actions"]
        if observations.shape[1:] != self.observations.shape[1:] or targets.shape[1:] != self.targets.shape[1:]:
            raise UsageError(f"labels {str(path)!r} hold frames {observations.shape[1:]}, not {self.observations.shape[1:]}")
        keep = slice(max(len(actions) - self.capacity, 0), None)
        self.add(observations[keep], targets[keep], actions[keep])


def state_of(info: Mapping[str, Any] | None) -> np.ndarray:
    if not info or STATE_KEY not in info:
        raise UsageError(f"a teacher reads info[{STATE_KEY!r}]: the env must be a native vector env with {STATE_OPTION}=true")
    return info[STATE_KEY]
