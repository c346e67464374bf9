"""Games recorded as Minari datasets (Farama's format for offline RL): what ``agents.record`` writes.

Any player of a two-player game (a built-in one, a model file, a run folder's model) plays the
learner's side of the env against a built-in opponent, a batch of games at once in the env's own
vector env; each game's first episode is kept, exactly as the single env seeded ``seed + k`` plays
episode k. The dataset holds the env's spec, so ``dataset.recover_environment()`` makes the same
env (its opponent included: hence a built-in opponent, which a spec can name). Infos are kept as
arrays, one row per step and one for the reset: numbers as numbers, words (such as the winner:
``b"left"``, ``b"right"``, ``b"draw"``, or ``b""`` while playing) as bytes, which HDF5 stores.

Minari's own collector wraps one env and needs JAX to build its episodes; this builds them from
whole arrays, so recording needs only ``minari[hdf5]``.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np

from agents.common.errors import UsageError
from agents.session.console import counting_from
from ballenvs.reference import reference_for

#: Minari's dataset ids: ``namespace/name-v<version>``.
DATASET_ID = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.]+(?:-[A-Za-z0-9_.]+)*-v\d+$")
#: Games stepped at once while recording.
BATCH_GAMES = 100


def check_dataset_id(dataset_id: str) -> str:
    example = "ballenvs/sumo-planner-v0"
    if not DATASET_ID.match(dataset_id):
        raise UsageError(f"--dataset-id {dataset_id!r} is not Minari's namespace/name-v<version>, e.g. {example}")
    namespace, name = dataset_id.split("/")
    if any(not part.strip(".") for part in (namespace, name.rsplit("-v", 1)[0])):  # '.' or '..' would leave the data path
        raise UsageError(f"--dataset-id {dataset_id!r}: its namespace and name must hold a letter or digit, e.g. {example}")
    return dataset_id


def check_data_path(data_path: Path) -> None:
    """The folder datasets go in: a folder or none yet, under folders this process can write in."""
    existing = data_path
    try:
        while not existing.exists():
            existing = existing.parent
    except OSError as error:  # a name past the file system's limit
        raise UsageError(f"--data-path {str(data_path)[:80]!r}: {error.strerror}") from None
    if not existing.is_dir():
        raise UsageError(f"--data-path {str(data_path)!r}: {str(existing)!r} is a file, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        raise UsageError(f"--data-path {str(data_path)!r}: cannot write in {str(existing)!r}")
    try:  # access() says yes where mkdir says no (/proc, a read-only mount for root): make a folder there and remove it
        os.rmdir(tempfile.mkdtemp(dir=existing, prefix=".ballenvs-probe-"))
    except OSError as error:
        raise UsageError(
            f"--data-path {str(data_path)!r}: cannot make a folder in {str(existing)!r}: {error.strerror}"
        ) from None


def refuse_existing(data_path: Path, dataset_id: str) -> None:
    """A dataset is never replaced: a new recording takes a new id or version."""
    if (data_path / dataset_id).exists():
        where = str(data_path)
        raise UsageError(f"dataset {dataset_id!r} already exists in {where!r}; choose another --dataset-id or version")


@dataclass
class _Game:
    """One game's first episode as it is played."""

    seed: int
    observations: list[np.ndarray]
    infos: list[dict[str, Any]]
    actions: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    terminations: list[bool] = field(default_factory=list)
    truncations: list[bool] = field(default_factory=list)

    @property
    def finished(self) -> bool:
        return bool(self.terminations) and (self.terminations[-1] or self.truncations[-1])


def record_games(
    player: Any,
    env_id: str,
    env_kwargs: dict[str, Any],
    episodes: int,
    seed: int,
    on_games: Callable[[int], None] | None = None,
) -> list[Any]:
    """``episodes`` games of ``player`` (a :class:`ballenvs.game.Player`) on the learner's side of
    ``env_id`` under ``env_kwargs``, game k seeded ``seed + k``: Minari's EpisodeBuffers.
    ``on_games(finished)`` after every step, with the games over so far."""
    games: list[_Game] = []
    arena = reference_for(env_id).arena
    for start in range(0, episodes, BATCH_GAMES):
        count = min(BATCH_GAMES, episodes - start)
        envs = gym.make_vec(env_id, num_envs=count, vectorization_mode="vector_entry_point", **env_kwargs)
        try:
            games += _play_batch(envs, arena, player, seed + start, counting_from(on_games, start))
        finally:
            envs.close()
    return [_episode_buffer(index, game) for index, game in enumerate(games)]


def _play_batch(envs: Any, arena: Any, player: Any, seed: int, on_games: Callable[[int], None] | None) -> list[_Game]:
    observations, infos = envs.reset(seed=[seed + i for i in range(envs.num_envs)])
    player.reset(None)
    games = [_Game(seed + i, [observations[i]], [_info_of(infos, i)]) for i in range(envs.num_envs)]
    while not all(game.finished for game in games):
        actions = np.asarray(player.act(arena.learner_seat(envs)), dtype=np.int64)
        observations, rewards, terminated, truncated, infos = envs.step(actions)
        for i, game in enumerate(games):
            if game.finished:  # its env resets now: only each game's first episode is kept
                continue
            game.actions.append(int(actions[i]))
            game.observations.append(observations[i])
            game.rewards.append(float(rewards[i]))
            game.terminations.append(bool(terminated[i]))
            game.truncations.append(bool(truncated[i]))
            game.infos.append(_info_of(infos, i))
        if on_games is not None:
            on_games(sum(game.finished for game in games))
    return games


def _info_of(infos: dict[str, Any], i: int) -> dict[str, Any]:
    """Game ``i``'s info from a vector env's (its values where its mask says it has them)."""
    has = {key: infos.get(f"_{key}", None) for key in infos if not key.startswith("_")}
    return {key: infos[key][i] for key, mask in has.items() if mask is None or mask[i]}


def _info_array(values: list[Any]) -> np.ndarray:
    """One info key over an episode as an array HDF5 stores: numbers (and tuples of them) as they
    are, anything else as bytes (None as b"")."""
    if all(isinstance(v, (bool, int, float, np.number, np.bool_, tuple)) for v in values):
        return np.asarray(values)
    return np.array([b"" if v is None else str(v).encode() for v in values])


def _episode_buffer(index: int, game: _Game) -> Any:
    from minari.data_collector.episode_buffer import EpisodeBuffer

    # An info key a step lacks (the reset's, mostly) takes the value the game starts with: None.
    keys = sorted({key for info in game.infos for key in info})
    defaults = {key: next(info[key] for info in game.infos if key in info) for key in keys}
    infos = {key: _info_array([info.get(key, _blank(defaults[key])) for info in game.infos]) for key in keys}
    return EpisodeBuffer(
        id=index,
        seed=game.seed,
        observations=np.stack(game.observations),
        actions=np.asarray(game.actions, dtype=np.int64),
        rewards=np.asarray(game.rewards, dtype=np.float64),
        terminations=np.asarray(game.terminations),
        truncations=np.asarray(game.truncations),
        infos=infos,
    )


def _blank(example: Any) -> Any:
    """What a step without this info key records: zeros of a number's (or tuple's) shape, else None."""
    if isinstance(example, tuple):
        return tuple(0.0 for _ in example)
    if isinstance(example, (bool, int, float, np.number, np.bool_)):
        return 0
    return None


@contextmanager
def _datasets_root(path: Path) -> Iterator[None]:
    """Minari writes under $MINARI_DATASETS_PATH: pointed at ``path`` for the block."""
    before = os.environ.get("MINARI_DATASETS_PATH")
    os.environ["MINARI_DATASETS_PATH"] = str(path)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("MINARI_DATASETS_PATH", None)
        else:
            os.environ["MINARI_DATASETS_PATH"] = before


def write_dataset(
    data_path: Path, dataset_id: str, buffers: list[Any], env_id: str, env_kwargs: dict[str, Any], **metadata: Any
) -> Path:
    """The episodes as Minari dataset ``dataset_id`` under ``data_path``, with the env's spec: written
    in a temporary folder beside it and moved into place whole, so a failure leaves nothing."""
    import minari

    data_path = data_path.resolve()  # Minari joins its root to paths it made from it
    refuse_existing(data_path, dataset_id)
    target = data_path / dataset_id
    data_path.mkdir(parents=True, exist_ok=True)
    spec = gym.spec(env_id)
    env = gym.make(env_id, **env_kwargs)
    try:
        with tempfile.TemporaryDirectory(dir=data_path, prefix=".recording-") as scratch:
            with _datasets_root(Path(scratch)), warnings.catch_warnings():
                # Its advice to name an author, a code link and an eval env: the caller's metadata says what it knows.
                warnings.filterwarnings("ignore", message=r"`\w+` is set to None", category=UserWarning)
                # Frames as they are: Minari's JPEG is lossy, and refuses one-channel frames (the duel's).
                minari.create_dataset_from_buffers(dataset_id, buffers, env=env.spec or spec, jpeg_encoding=False, **metadata)
            target.parent.mkdir(parents=True, exist_ok=True)
            # Minari's note of the namespace, where this is the namespace's first dataset.
            namespace_note = Path(scratch) / target.parent.name / "namespace_metadata.json"
            if namespace_note.exists() and not (target.parent / namespace_note.name).exists():
                shutil.copy(namespace_note, target.parent / namespace_note.name)
            os.replace(Path(scratch) / dataset_id, target)
    finally:
        env.close()
    return target


def load_dataset(data_path: Path, dataset_id: str) -> Any:
    """A dataset :func:`write_dataset` wrote, read back through Minari."""
    import minari

    with _datasets_root(data_path.resolve()):
        return minari.load_dataset(dataset_id)
