"""stable-baselines3's DQN as our trainers and tools use it: built from a config section, saved in
SB3's own .zip format, and read back without running anything from the file.

stable-baselines3 pickles (cloudpickle) the spaces, schedules and classes into its .zip and its
replay buffer into a .pkl, and ``DQN.load`` unpickles them: a crafted file runs code. Here a
model is rebuilt from its run's config.yml and env exactly as the trainer built it; from the
file only the plain JSON counters and the weights (``torch.load(weights_only=True)``) are
read. Replay buffers are written as ``.npz`` arrays and read with ``allow_pickle=False``.
"""

from __future__ import annotations

import dataclasses
import inspect
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.buffers import ReplayBuffer
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, CombinedExtractor, FlattenExtractor, NatureCNN
from stable_baselines3.common.utils import LinearSchedule

from agents.artifacts.models import read_snapshot, section_of, spaces_of
from agents.artifacts.runs import atomic_path
from agents.common.configuration.config import Section, parse_kwargs, schedule
from agents.common.configuration.hyperparameters import SB3DQNConfig, keys_of
from agents.common.errors import UsageError
from agents.common.networks.policies import check_net_arch, check_policy
from agents.common.readers import MAX_TEXT_BYTES, count, npz_arrays, open_zip, parse_json, torch_weights, zip_member
from agents.sb3.buffers import DictNStepReplayBuffer, RandomShiftReplayBuffer

#: The counters a saved model carries that a resumed run continues from.
_COUNTERS = ("num_timesteps", "_n_updates", "_n_calls", "_episode_num")
_WEIGHTS = ("policy", "policy.optimizer")
_BUFFER_ARRAYS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")

#: Section keys of ours that reach stable-baselines3's DQN another way (see :func:`dqn_kwargs`;
#: tail_averaging: the learner's callback, :class:`agents.sb3.callbacks.AverageTail`).
TRANSLATED_KEYS = ("augment_shift", "tail_averaging")
#: Our replay buffers, left out of a saved model so that SB3 alone can load it.
_OUR_BUFFERS = (DictNStepReplayBuffer, RandomShiftReplayBuffer)

#: The policy_kwargs stable-baselines3's DQN policies take.
POLICY_KWARGS: tuple[str, ...] = (
    "net_arch",
    "activation_fn",
    "features_extractor_class",
    "features_extractor_kwargs",
    "normalize_images",
)
POLICY_KWARGS += ("optimizer_class", "optimizer_kwargs")


def check_values(section: Section, observation_space: spaces.Space) -> None:
    """What stable-baselines3 would find wrong only once a model is built or trained: checked by
    the trainer before its run folder, and by every loader before it builds a run's network."""
    check_policy(section.policy, observation_space)
    policy_kwargs = section.network
    replay_buffer_kwargs = parse_kwargs("replay_buffer_kwargs", section.algo_kwargs.get("replay_buffer_kwargs"))
    unknown = sorted(set(policy_kwargs) - set(POLICY_KWARGS))
    if unknown:
        raise UsageError(
            f"policy_kwargs key(s) {', '.join(unknown)} not taken by DQN policies; valid: {', '.join(POLICY_KWARGS)}"
        )
    if "net_arch" in policy_kwargs:
        check_net_arch(policy_kwargs["net_arch"])
    if not isinstance(policy_kwargs.get("normalize_images", True), bool):
        raise UsageError(f"policy_kwargs normalize_images must be True or False, got {policy_kwargs['normalize_images']!r}")
    if not isinstance(policy_kwargs.get("optimizer_kwargs", {}), dict):
        raise UsageError(f"policy_kwargs optimizer_kwargs must be a dict, got {policy_kwargs['optimizer_kwargs']!r}")
    check_roles(section.policy, policy_kwargs, replay_buffer_kwargs)
    if section.algo_kwargs.get("augment_shift") and replay_buffer_kwargs:
        raise UsageError("augment_shift brings its own replay buffer; replay_buffer_kwargs cannot be given with it")


def check_roles(policy: str, policy_kwargs: dict[str, Any], replay_buffer_kwargs: dict[str, Any]) -> None:
    """Each class in the kwargs is one of its role (an activation, an optimiser, a features
    extractor), and each kwargs dict holds only what its class takes."""
    roles = {
        "activation_fn": (torch.nn.Module, "an activation such as nn.ReLU"),
        "optimizer_class": (torch.optim.Optimizer, "an optimiser such as th.optim.Adam"),
        "features_extractor_class": (BaseFeaturesExtractor, "a stable-baselines3 features extractor"),
    }
    for key, (base, role) in roles.items():
        value = policy_kwargs.get(key)
        if value is not None and not (inspect.isclass(value) and issubclass(value, base)):
            raise UsageError(f"policy_kwargs {key}={getattr(value, '__name__', value)!r} is not {role}")
    activation = policy_kwargs.get("activation_fn")
    if activation is not None and issubclass(activation, (torch.nn.Sequential, torch.nn.ModuleList, torch.nn.ModuleDict)):
        raise UsageError(f"policy_kwargs activation_fn={activation.__name__!r} is not an activation such as nn.ReLU")
    optimizer = policy_kwargs.get("optimizer_class", torch.optim.Adam)
    defaults = {"CnnPolicy": NatureCNN, "MlpPolicy": FlattenExtractor, "MultiInputPolicy": CombinedExtractor}
    extractor = policy_kwargs.get("features_extractor_class", defaults[policy])
    # The optimiser gets the parameters and the learning rate from SB3, an extractor the space.
    targets = {"optimizer_kwargs": (optimizer, 2), "features_extractor_kwargs": (extractor, 1)}
    for key, (target, skip) in targets.items():
        given = policy_kwargs.get(key) or {}
        if not isinstance(given, dict):
            raise UsageError(f"policy_kwargs {key} must be a dict, got {given!r}")
        if given and target is not None:
            _check_arguments(f"policy_kwargs {key}", given, target, skip)
    if replay_buffer_kwargs:
        _check_arguments("replay_buffer_kwargs", replay_buffer_kwargs, ReplayBuffer, 5)


def _check_arguments(what: str, given: dict[str, Any], target: Any, skip: int) -> None:
    """``given`` holds only keyword arguments ``target`` takes, past its first ``skip`` (which we pass)."""
    import inspect

    parameters = list(inspect.signature(target).parameters)[skip:]
    unknown = sorted(set(given) - set(parameters))
    if unknown:
        raise UsageError(f"{what}: {', '.join(unknown)} not taken by {target.__name__}; it takes {', '.join(parameters)}")


def dqn_kwargs(algo_kwargs: dict[str, Any], observation_space: spaces.Space) -> dict[str, Any]:
    """DQN's keyword arguments from a section's algorithm keys, built as the zoo builds them:
    policy and replay buffer kwargs parsed, ``lin_<x>`` learning rates made schedules,
    ``n_steps`` on Dict observations handed to our DictNStepReplayBuffer (SB3's DQN refuses it),
    and ``augment_shift`` made our RandomShiftReplayBuffer (with the section's n-step returns)."""
    kwargs = dict(algo_kwargs)
    kwargs.pop("tail_averaging", None)  # the learner's callback keeps the mean
    shift = kwargs.pop("augment_shift", 0)
    for key in ("policy_kwargs", "replay_buffer_kwargs"):
        if key in kwargs:
            kwargs[key] = parse_kwargs(key, kwargs[key])
    if "learning_rate" in kwargs:
        initial, linear = schedule(kwargs["learning_rate"])
        # SB3's own class, so that a saved model unpickles where agents is not installed.
        kwargs["learning_rate"] = LinearSchedule(initial, 0.0, 1.0) if linear else initial
    n_steps = kwargs.get("n_steps", 1)
    if n_steps > 1 and isinstance(observation_space, spaces.Dict):
        kwargs["n_steps"] = 1
        kwargs["replay_buffer_class"] = DictNStepReplayBuffer
        kwargs["replay_buffer_kwargs"] = {
            **kwargs.get("replay_buffer_kwargs", {}),
            "n_steps": n_steps,
            "gamma": kwargs.get("gamma", 0.99),
        }
    if shift:
        kwargs["n_steps"] = 1  # the buffer sums the returns; SB3 would warn that it ignores n_steps
        kwargs["replay_buffer_class"] = RandomShiftReplayBuffer
        kwargs["replay_buffer_kwargs"] = {"pad": shift, "n_steps": n_steps, "gamma": kwargs.get("gamma", 0.99)}
    return kwargs


def build_dqn(section: Section, env: Any, seed: int | None, device: str, **overrides: Any) -> DQN:
    """A fresh DQN for ``section``: on ``env`` (a VecEnv), or on ``(observation_space,
    action_space)`` for a model that only plays (then ``overrides`` may shrink its buffer)."""
    if isinstance(env, tuple):
        observation_space, action_space = env
        kwargs = dqn_kwargs({**section.algo_kwargs, **overrides}, observation_space)
        no_env: Any = None  # spaces only: set below, as the model is set up
        model = DQN(section.policy, no_env, seed=seed, device=device, _init_setup_model=False, **kwargs)
        model.observation_space, model.action_space, model.n_envs = observation_space, action_space, 1
        model._setup_model()
        return model
    return DQN(
        section.policy,
        env,
        seed=seed,
        device=device,
        **dqn_kwargs({**section.algo_kwargs, **overrides}, env.observation_space),
    )


def save_model(model: DQN, path: Path) -> None:
    """SB3's .zip, written atomically, loadable by a plain ``DQN.load`` where ``agents`` is not
    installed (the RL Zoo, another project): nothing of ours is pickled in it. Our n-step buffer
    for Dict observations is left out (a loaded model gets SB3's default buffer; our own loading
    rebuilds the model from its run's config anyway); so is our frame-shifting buffer."""
    ours = model.replay_buffer_class in _OUR_BUFFERS
    with atomic_path(path) as tmp:
        model.save(tmp, exclude=["replay_buffer_class", "replay_buffer_kwargs"] if ours else None)


#: A model file as :func:`read_model_file` reads it: its plain entries and its weights.
SavedModel = tuple[dict[str, Any], dict[str, Any]]


def read_model_file(path: Path, device: str) -> SavedModel:
    """The plain JSON entries and the weights of an SB3 .zip, never unpickling anything; its
    entries' sizes and the JSON's depth capped, the counters a resumed run continues checked."""
    what = f"model {str(path)!r}"
    with open_zip(path, "model") as archive:
        data = parse_json(zip_member(archive, "data", what, MAX_TEXT_BYTES), f"{what}: its data entry")
        raw = {name: zip_member(archive, f"{name}.pth", what) for name in _WEIGHTS}
    if not isinstance(data, dict):
        raise UsageError(f"cannot load {what}: its data entry is not a mapping")
    params = {name: torch_weights(blob, f"{what}: its {name}.pth", device) for name, blob in raw.items()}
    if not all(isinstance(v, torch.Tensor) for v in _mapping(params["policy"], f"{what}: its policy.pth").values()):
        raise UsageError(f"cannot load {what}: its policy.pth is not a mapping of tensors")
    _mapping(params["policy.optimizer"], f"{what}: its policy.optimizer.pth")
    plain = {key: value for key, value in data.items() if not (isinstance(value, dict) and ":serialized:" in value)}
    for counter in _COUNTERS:
        if counter in plain:
            plain[counter] = count(plain[counter], f"{what}: {counter}")
    return plain, params


def _mapping(value: Any, what: str) -> dict:
    if not isinstance(value, dict):
        raise UsageError(f"cannot load {what}: not a mapping")
    return value


def restore(model: DQN, saved: SavedModel, path: Path, device: str) -> DQN:
    """Put the weights and counters ``saved`` (read from ``path``) into ``model`` (built for the same run)."""
    plain, params = saved
    try:
        model.set_parameters(params, exact_match=True, device=device)
    except (RuntimeError, ValueError, KeyError) as error:
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise UsageError(f"cannot load model {str(path)!r}: its weights do not fit the run's network ({first_line})") from None
    for counter in _COUNTERS:
        if counter in plain:
            setattr(model, counter, plain[counter])
    return model


def load_policy(model_path: Path, run_config: dict[str, Any], device: str) -> DQN:
    """A saved model that plays (its replay buffer left tiny), rebuilt from its run's config."""

    section, spaces_ = section_of(run_config), spaces_of(run_config)
    check_values(section, spaces_[0])
    model = build_dqn(section, spaces_, seed=None, device=device, buffer_size=1, learning_starts=0)
    return restore(model, read_model_file(model_path, device), model_path, device)


def load_snapshot(path: Path, run_config: dict[str, Any], device: str) -> DQN:
    """A self-play snapshot (the Q-network's weights) of a run, as a model that plays."""

    section, spaces_ = section_of(run_config), spaces_of(run_config)
    check_values(section, spaces_[0])
    model = build_dqn(section, spaces_, seed=None, device=device, buffer_size=1, learning_starts=0)
    try:
        model.q_net.load_state_dict(read_snapshot(path, device)["q"])
    except RuntimeError:
        raise UsageError(f"snapshot {str(path)!r}: its weights do not fit the run's network") from None
    return model


def from_q_network(section: Section, spaces_: tuple[Any, Any], weights: dict[str, torch.Tensor]) -> DQN:
    """An SB3 DQN that plays the weights of one of our Q-networks (:mod:`agents.algorithms.networks`):
    the architectures match (the Nature CNN, or SB3's flattened and one-hot features, then the
    ``net_arch`` head), only the names differ. A network with LayerNorm (PQN's) has no SB3
    counterpart and is refused. Of the section's keys only SB3's count (a distilled student's
    teacher is none of DQN's business)."""
    sb3_keys = keys_of(SB3DQNConfig)
    playing = dataclasses.replace(section, algo_kwargs={k: v for k, v in section.algo_kwargs.items() if k in sb3_keys})
    model = build_dqn(playing, spaces_, seed=None, device="cpu", buffer_size=1, learning_starts=0)
    mapped = {}
    for name, value in weights.items():
        if name.startswith("head."):
            mapped["q_net." + name.removeprefix("head.")] = value
        elif name.startswith("encoders."):
            _, part, module, rest = name.split(".", 3)
            extractor = "features_extractor." + ("" if part == "observation" else f"extractors.{part}.")
            mapped[extractor + {"convs": "cnn", "cnn": "cnn", "linear": "linear"}[module] + "." + rest] = value
    try:
        model.q_net.load_state_dict(mapped)
        model.q_net_target.load_state_dict(mapped)
    except (RuntimeError, KeyError) as error:
        raise UsageError(f"this network has no stable-baselines3 counterpart ({str(error).splitlines()[0]})") from None
    return model


def save_replay_buffer(model: DQN, path: Path) -> None:
    """The replay buffer's arrays as an .npz (no pickle), atomically."""
    buffer = model.replay_buffer
    assert buffer is not None  # a DQN has one
    arrays: dict[str, Any] = {"pos": np.array(buffer.pos), "full": np.array(buffer.full)}
    for name in _BUFFER_ARRAYS:
        value = getattr(buffer, name, None)
        if isinstance(value, dict):
            arrays |= {f"{name}/{key}": part for key, part in value.items()}
        elif value is not None:
            arrays[name] = value
    with atomic_path(path) as tmp, open(tmp, "wb") as file:
        np.savez(file, **arrays)


def load_replay_buffer(model: DQN, path: Path) -> int:
    """Fill the model's replay buffer from an .npz of :func:`save_replay_buffer`; returns how many
    transitions. Every array must have the run's shape and kind, its position fit the buffer."""
    buffer = model.replay_buffer
    assert buffer is not None  # a DQN has one
    what = f"replay buffer {str(path)!r}"
    targets: dict[str, np.ndarray] = {}
    for name in _BUFFER_ARRAYS:
        target = getattr(buffer, name, None)
        parts = target.items() if isinstance(target, dict) else [(None, target)] if target is not None else []
        targets |= {(name if key is None else f"{name}/{key}"): array for key, array in parts}
    stored = npz_arrays(path, "replay buffer", ("pos", "full", *targets))
    for name, array in targets.items():
        if stored[name].shape != array.shape or stored[name].dtype.kind != array.dtype.kind:
            raise UsageError(
                f"{what}: {name} holds {stored[name].dtype} {stored[name].shape}, the run's is {array.dtype} {array.shape}"
            )
    if stored["pos"].shape != () or stored["full"].shape != () or stored["full"].dtype != bool:
        raise UsageError(f"{what}: pos and full must be a number and a boolean")
    pos = count(stored["pos"].item(), f"{what}: pos", 0, buffer.buffer_size - 1)
    for name, array in targets.items():
        array[...] = stored[name]
    buffer.pos, buffer.full = pos, bool(stored["full"])
    return buffer.size() * buffer.n_envs
