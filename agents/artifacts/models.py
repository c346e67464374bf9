"""Finding, loading and snapshotting trained models, whichever algorithm wrote them (keyed by
the run's ``algo``): the one module through which every tool reads a model.

A model is always read with its run folder's config.yml: the network and spaces are rebuilt
from there and the file supplies weights only (see the loaders of :mod:`agents.common.configuration.registry`),
so a model file never runs code, and one without a run folder is refused. Self-play snapshots
(``snapshots/snapshot_<steps>_steps.pt``) are a Q-network's weights (and, for our own networks,
their spec), read the same way. Each algorithm's own file format lives with it
(:mod:`agents.session.checkpoint`, :mod:`agents.sb3.sb3_dqn`), behind its registry entry.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from gymnasium import spaces

from agents.artifacts.runs import (
    BEST_MODEL,
    CHECKPOINTS,
    CONFIG_NAME,
    FINAL_MODEL,
    INTERRUPTED_MODEL,
    REPLAY_BUFFER,
    atomic_path,
    latest_model,
    model_file,
    read_config,
)
from agents.common.configuration.config import NOT_ZOO_KEYS, RUN_KEYS, Section, build_section
from agents.common.configuration.config_files import load_section
from agents.common.configuration.memory import check_memory
from agents.common.configuration.registry import ALGORITHMS, MODEL_SUFFIXES, algorithm
from agents.common.errors import UsageError
from agents.common.networks.augment import check_augmentation
from agents.common.readers import count, mapping_of, parse_yaml, read_text, torch_weights

if TYPE_CHECKING:
    import torch


def run_folder_candidate(model_path: Path) -> Path:
    """Where a model file's run folder would be (its checkpoints sit one level down)."""
    return model_path.parent.parent if model_path.parent.name == CHECKPOINTS else model_path.parent


def run_dir_of(model_path: Path) -> Path:
    """The run folder a model file belongs to (its checkpoints sit one level down)."""
    run_dir = run_folder_candidate(model_path)
    if not (run_dir / CONFIG_NAME).is_file():
        raise UsageError(
            f"model {str(model_path)!r} has no {CONFIG_NAME} in its run folder {str(run_dir)!r}: "
            "models are only loaded with the run's config (their network is rebuilt from it)"
        )
    return run_dir


#: The model a run folder stands for, first to last: its final model (what its last figure played),
#: else its best, else its interrupted one.
PLAYED_MODELS = (FINAL_MODEL, BEST_MODEL, INTERRUPTED_MODEL)


def find_model(path: str | Path, names: tuple[str, ...] = PLAYED_MODELS) -> tuple[Path, Path]:
    """The model file and its run folder, from either of them; in a folder the first of ``names`` there."""
    path = Path(path)
    if path.is_file():
        if path.name.startswith("."):
            raise UsageError(f"{str(path)!r} is a temporary file left by an interrupted write, not a model")
        return path, run_dir_of(path)
    if not path.is_dir():
        raise UsageError(f"no model file or run folder at {str(path)!r}")
    for name in names:
        found = model_file(path, name, MODEL_SUFFIXES)
        if found is not None:
            return found, path
    raise UsageError(f"no {', '.join(names)} in {str(path)!r}")


@dataclass(frozen=True)
class Resumed:
    """What ``--resume PATH`` continues: the model file, its run folder, that run's config, the
    replay buffer it continues with (None: it starts empty) and what the user is told of it once
    the run starts."""

    model: Path
    run_dir: Path
    config: dict[str, Any]
    replay_buffer: Path | None
    notes: tuple[str, ...] = ()

    @property
    def algo(self) -> str:
        return str(self.config["algo"])


def resumed_run(path: str | Path) -> Resumed:
    """What ``--resume PATH`` continues from: a model file, or a run folder's latest model (see
    :func:`agents.artifacts.runs.latest_model`); with its run folder, that run's config and
    its replay buffer, when the run saved one with the model resumed from (a checkpoint's is not kept)."""
    path = Path(path)
    if path.is_file():
        model, run_dir = find_model(path)
    elif path.is_dir():
        latest = latest_model(path, MODEL_SUFFIXES)
        if latest is None:
            raise UsageError(f"--resume {str(path)!r}: no {FINAL_MODEL}, {INTERRUPTED_MODEL} nor checkpoint in that folder")
        model, run_dir = latest, path
    else:
        raise UsageError(f"--resume {str(path)!r}: no such model file or run folder")
    config = read_config(run_dir)
    replay_buffer: Path | None = None
    notes: tuple[str, ...] = ()
    if config.get("save_replay_buffer") and model.stem.startswith((FINAL_MODEL, INTERRUPTED_MODEL)):
        replay_buffer = run_dir / REPLAY_BUFFER
        if not replay_buffer.is_file():
            notes = (f"{run_dir} asked for its replay buffer but none was saved: it starts empty",)
            replay_buffer = None
    return Resumed(model, run_dir, config, replay_buffer, notes)


def load_run_model(model_path: Path, run_dir: Path, device: str) -> tuple[Any, dict[str, Any]]:
    """The model or self-play snapshot at ``model_path`` as an object with ``predict(obs,
    deterministic)`` and ``q_net``, and its run's config."""
    config = read_config(run_dir)
    algo = algorithm(config["algo"])
    if model_path.parent.name == SNAPSHOTS:
        return algo.load(model_path, config, device, snapshot=True), config
    if model_path.suffix != algo.suffix:
        raise UsageError(f"model {str(model_path)!r}: a {config['algo']} run's models are {algo.suffix} files")
    return algo.load(model_path, config, device), config


# -- self-play snapshots ---------------------------------------------------------------------------

SNAPSHOTS = "snapshots"
_SNAPSHOT = re.compile(r"^snapshot_(\d{1,15})_steps\.pt$")
SNAPSHOT_FORMAT = "ballenvs-snapshot/1"


def save_snapshot(path: Path, steps: int, q: torch.nn.Module, spec: Mapping[str, Any] | None) -> None:
    """A Q-network's weights (and, for our own networks, their spec), weights only."""
    import torch  # here: finding and reading a model's run needs no torch

    state = {"format": SNAPSHOT_FORMAT, "steps": steps, "q": {k: v.detach().cpu() for k, v in q.state_dict().items()}}
    if spec is not None:
        state["spec"] = dict(spec)
    with atomic_path(path) as tmp:
        torch.save(state, tmp)


def read_snapshot(path: Path, device: str) -> dict[str, Any]:
    """A snapshot's contents, checked: its format, its step (an int >= 0) and a mapping of tensors."""
    what = f"snapshot {str(path)!r}"
    state = torch_weights(path, what, device)
    if not isinstance(state, dict) or state.get("format") != SNAPSHOT_FORMAT:
        raise UsageError(f"{str(path)!r} is not a self-play snapshot (expected format {SNAPSHOT_FORMAT!r})")
    count(state.get("steps"), f"{what}: steps")
    weights = mapping_of(state, what, {"q": dict})["q"]
    import torch  # torch_weights above has loaded it

    if not all(isinstance(k, str) and isinstance(v, torch.Tensor) for k, v in weights.items()):
        raise UsageError(f"{what}: its weights are not a mapping of tensors")
    return state


def snapshot_steps(path: Path) -> int:
    """The training step in a snapshot's name (``snapshot_<steps>_steps.pt``); another name is refused."""
    match = _SNAPSHOT.match(path.name)
    if match is None:
        raise UsageError(f"{str(path)!r} is not named as a snapshot (snapshot_<steps>_steps.pt)")
    return int(match.group(1))


def snapshot_name(steps: int) -> str:
    return f"snapshot_{steps}_steps.pt"


# -- models of other tools -------------------------------------------------------------------------

#: Zoo hyperparameters that change what a model sees, which a rebuilt env would not apply.
_ZOO_WRAPPERS = ("env_wrapper", "normalize", "vec_env_wrapper", "frame_skip")


def zoo_run(path: Path) -> tuple[Path, dict[str, Any]] | None:
    """An RL Zoo run folder (``<env>.zip`` beside ``<env>/config.yml``, one of our env ids) as a
    model file and the run config our loaders take; None if ``path`` is not one. The zoo's
    config.yml is read as data (its OrderedDict tag only); keys that wrap the env differently
    from ours are refused."""
    import ballenvs

    if not path.is_dir():
        return None
    found = [env_id for env_id in ballenvs.ENV_IDS if (path / f"{env_id}.zip").is_file() and (path / env_id).is_dir()]
    if not found:
        return None
    env_id = found[0]
    hyper = read_zoo_hyperparams(path / env_id / "config.yml")
    return path / f"{env_id}.zip", foreign_config(env_id, hyper, f"RL Zoo run {str(path)!r}")


def read_zoo_hyperparams(path: Path) -> dict[str, Any]:
    hyper = parse_yaml(read_text(path, "RL Zoo config"), f"RL Zoo config {str(path)!r}", zoo=True)
    if not isinstance(hyper, dict):
        raise UsageError(f"RL Zoo config {str(path)!r} must be a mapping of hyperparameters")
    wrapped = [key for key in _ZOO_WRAPPERS if hyper.get(key)]
    if wrapped:
        raise UsageError(
            f"RL Zoo config {str(path)!r}: {', '.join(wrapped)} wrap the env as our tools do not; play it with rl_zoo3.enjoy"
        )
    return hyper


def bare_model(path: Path, env_id: str, plain: dict[str, Any]) -> tuple[Path, dict[str, Any]]:
    """A stable-baselines3 DQN .zip with no run folder, played on ``env_id`` with the env's shipped
    config section (its network and frame stacking); the zip's plain entries (``plain``, as
    ``agents.sb3.sb3_dqn.read_model_file`` reads them) give its ``policy_kwargs`` (net_arch), when it
    has them, in the section's place. Weights only, as ever: a zip whose weights do not fit that
    network is refused."""
    hyper = load_section(ALGORITHMS["dqn"].config_path(), env_id)
    if isinstance(plain.get("policy_kwargs"), dict) and plain["policy_kwargs"]:
        hyper["policy_kwargs"] = plain["policy_kwargs"]
    for key in NOT_ZOO_KEYS:
        hyper.pop(key, None)
    if isinstance(hyper.get("env_kwargs"), dict) and hyper["env_kwargs"].get("opponent") == "self":
        hyper["env_kwargs"] = {k: v for k, v in hyper["env_kwargs"].items() if k != "opponent"}
    return path, foreign_config(env_id, hyper, f"model {str(path)!r}")


def foreign_config(env_id: str, hyper: dict[str, Any], what: str) -> dict[str, Any]:
    """A run config (as our config.yml holds it) for a model another tool trained: SB3's DQN on
    ``env_id`` with the keys of ``hyper`` that our DQN section takes."""
    keys = {**RUN_KEYS, **ALGORITHMS["dqn"].keys}
    taken = {key: value for key, value in hyper.items() if key in keys}
    if "policy" not in taken:
        raise UsageError(f"{what}: its hyperparameters name no policy")
    taken.setdefault("n_timesteps", 1)
    return {"algo": "dqn", "env_id": env_id, "seed": 0, "vec_env": "dummy", "timesteps": 1, "hyperparams": taken}


def section_of(run_config: dict[str, Any]) -> Section:
    """The config section a run trained with, as written in its config.yml."""
    return build_section(run_config["env_id"], run_config["hyperparams"], {}, algorithm(run_config["algo"]).schema)


def spaces_of(run_config: dict[str, Any]) -> tuple[spaces.Space, spaces.Space]:
    """The spaces a run's model sees, from its config (its values checked first, and its networks
    priced against the machine's memory before a loader builds them)."""
    from agents.environments.envs import probe_spaces  # stable-baselines3's wrappers: when a loader asks

    section = section_of(run_config)
    observation_space, action_space = probe_spaces(section.env_id, section.env_kwargs, section.frame_stack)
    check_spaces(section, observation_space, action_space)
    return observation_space, action_space


def check_spaces(
    section: Section, observation_space: spaces.Space, action_space: spaces.Space, replay_buffer: bool = False
) -> None:
    """What a section asks of the spaces it will see, whichever algorithm reads it: frames to shift
    only where there are frames, and networks (and a replay buffer, where ``replay_buffer``) that
    fit in the machine's memory."""
    shift = section.algo_kwargs.get("augment_shift", 0)
    if shift:
        check_augmentation(shift, observation_space)
    check_memory(section, observation_space, action_space, replay_buffer)
