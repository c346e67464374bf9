"""RLlib's checkpoint of a run (``<name>.rllib/``), checked before Ray reads a byte of it.

Ray restores a component from ``<stem>.msgpack`` when it finds one and otherwise unpickles
``<stem>.pkl``, and msgpack-numpy unpickles any array marked as holding Python objects: either way a
crafted checkpoint would run code on ``--resume``. Ours are written with ``use_msgpack=True``, so
:func:`check_checkpoint` holds a checkpoint to what we wrote: every folder of it holds exactly one
state file, ``.msgpack``, beside Ray's ``metadata.json`` (and the root's ``rllib_checkpoint.json``),
every state file decodes as plain msgpack with no object arrays in it, and the learner's module is
there; anything else is refused in one line. Ray's ``class_and_ctor_args.pkl`` files are
tolerated: a restore into the algorithm we build from the run's config never reads them
(``Checkpointable.restore_from_path``; ``tests/agents/rllib`` plants payloads in them and resumes).
Needs msgpack (the rllib extra), not Ray.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

from agents.common.errors import UsageError

#: The state files Ray writes: the algorithm's at the root, an RL module's, every other component's.
STATE_STEMS = ("algorithm_state", "module_state", "state")
#: Ray's own files beside the state, never read by a restore (the .pkl: see the module docstring).
RAY_FILES = ("metadata.json", "class_and_ctor_args.pkl")
ROOT_FILES = ("rllib_checkpoint.json",)
#: A state file larger than this is refused before it is decoded (ours are a few MB).
MAX_STATE_BYTES = 512 * 2**20
#: msgpack-numpy's marks: an array (``nd``) whose ``kind`` is ``O`` is unpickled.
_ARRAY_MARK, _KIND, _OBJECT_KINDS = b"nd", b"kind", (b"O", "O")


def check_checkpoint(folder: Path, learner_modules: tuple[str, ...]) -> None:
    """Refuse (one :class:`UsageError`) an RLlib checkpoint that is not made as ours are (see the
    module docstring); one of ``learner_modules`` (the module a run trains, by the kind of run)
    must be there, or Ray would restore no weights without a word."""
    what = f"RLlib checkpoint {str(folder)!r}"
    if folder.is_symlink() or not folder.is_dir():
        raise UsageError(f"{what} is not a folder")
    for directory, subfolders, files in os.walk(folder):
        here = Path(directory)
        place = what if here == folder else f"{what}: {here.relative_to(folder)}"
        for name in subfolders:
            if (here / name).is_symlink():
                raise UsageError(f"{place}: {name} is a link; a checkpoint holds files and folders only")
        states = [name for name in files if Path(name).suffix == ".msgpack" and Path(name).stem in STATE_STEMS]
        allowed = {*states, *RAY_FILES, *(ROOT_FILES if here == folder else ())}
        strangers = sorted(set(files) - allowed)
        if strangers:
            raise UsageError(
                f"{place} holds {strangers[0]!r}: a checkpoint of ours holds msgpack state files "
                f"({', '.join(f'{stem}.msgpack' for stem in STATE_STEMS)}) and Ray's {', '.join(RAY_FILES)}"
            )
        if len(states) != 1:
            found = ", ".join(states) or "none"
            raise UsageError(f"{place} must hold one state file (.msgpack); it holds {found}")
        for name in files:
            path = here / name
            if not stat.S_ISREG(path.lstat().st_mode):
                raise UsageError(f"{place}: {name} is not a regular file")
        _check_state(here / states[0], f"{place}: {states[0]}")
    modules = folder / "learner_group" / "learner" / "rl_module"
    if not any((modules / module_id).is_dir() for module_id in learner_modules):
        raise UsageError(
            f"{what} has no learner module (learner_group/learner/rl_module/ holds none of {', '.join(learner_modules)})"
        )


def _check_state(path: Path, what: str) -> None:
    """A state file: plain msgpack, decoded without msgpack-numpy's hook, holding no object arrays."""
    import msgpack

    # Not msgpack.unpackb: once Ray has loaded msgpack-numpy, that one is patched to decode (and unpickle) arrays.
    try:
        from msgpack._cmsgpack import unpackb
    except ImportError:  # msgpack without its C extension
        from msgpack.fallback import unpackb
    size = path.stat().st_size
    if size > MAX_STATE_BYTES:
        raise UsageError(f"{what} is {size:,} bytes; at most {MAX_STATE_BYTES:,} are read")
    try:
        state = unpackb(path.read_bytes(), raw=False, strict_map_key=False)
    except (ValueError, TypeError, msgpack.UnpackException, RecursionError) as error:
        raise UsageError(f"{what} is not a msgpack state ({type(error).__name__})") from None
    if _holds_objects(state):
        raise UsageError(f"{what} holds an array of Python objects (a pickle); only arrays of numbers are read")


def _holds_objects(value: Any) -> bool:
    """Whether msgpack-numpy would unpickle anything in ``value`` (iteratively: depth costs no stack)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if _ARRAY_MARK in item or "nd" in item:
                kind = item.get(_KIND, item.get("kind"))
                if kind in _OBJECT_KINDS or not isinstance(kind, (bytes, str, type(None))):
                    return True
            pending.extend(item.keys())
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
    return False
