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
import re
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
#: msgpack-numpy's arrays as our checkpoints hold them: ``{nd: True, type, kind: b"", shape, data}``
#: (an array) or ``{nd: False, type, data}`` (a number), of plain numeric dtypes; its other forms
#: (structured ``kind`` V, objects ``O``: pickles; ``complex``) and msgpack's ext types never.
ARRAY_KEYS, NUMBER_KEYS = {b"nd", b"type", b"kind", b"shape", b"data"}, {b"nd", b"type", b"data"}
PLAIN_DTYPE = re.compile(r"[<>|=]?[biuf][1248]")
#: The plain values a state holds besides arrays.
PLAIN = (bool, int, float, str, type(None))


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
        stem = state_stem(here, folder)
        states = [name for name in files if Path(name).suffix == ".msgpack" and Path(name).stem in STATE_STEMS]
        misnamed = [name for name in states if Path(name).stem != stem]
        if misnamed:  # Ray would look for {stem}.msgpack, then unpickle {stem}.pkl
            raise UsageError(f"{place} holds {misnamed[0]!r} where Ray reads {stem}.msgpack")
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


def state_stem(here: Path, root: Path) -> str:
    """The state file Ray reads in a checkpoint's folder: the algorithm's at the root, a module's in
    ``rl_module/`` and each of its modules, ``state`` in every other component's."""
    if here == root:
        return "algorithm_state"
    return "module_state" if "rl_module" in (here.name, here.parent.name) else "state"


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
    problem = _not_plain(state)
    if problem:
        raise UsageError(f"{what} holds {problem}; a state of ours holds plain values and arrays of numbers")


def _not_plain(value: Any) -> str | None:
    """What in a decoded state is not what ours hold (None: nothing): an array msgpack-numpy would
    build from raw bytes other than a plain numeric one whose shape its bytes fill (an object
    array is a pickle, a structured one pointers), a complex number, an ext type, raw bytes, a key
    that is not a name or a number (iteratively: depth costs no stack)."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            if b"nd" in item or "nd" in item:
                problem = _not_plain_array(item)
                if problem:
                    return problem
                continue
            if b"complex" in item or "complex" in item:
                return "a complex number (msgpack-numpy's form)"
            strange = [key for key in item if isinstance(key, bool) or not isinstance(key, (str, int))]
            if strange:
                return f"a key {strange[0]!r:.40} that is not a name or a number"
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            pending.extend(item)
        elif not isinstance(item, PLAIN):
            return f"a value of type {type(item).__name__} (raw bytes or an ext type)"
    return None


def _not_plain_array(item: dict) -> str | None:
    """What is wrong with one of msgpack-numpy's arrays (None: a plain numeric array or number)."""
    import numpy as np

    nd, kind, dtype, data = item.get(b"nd"), item.get(b"kind", b""), item.get(b"type"), item.get(b"data")
    keys = ARRAY_KEYS if nd is True else NUMBER_KEYS
    if set(item) != keys or not isinstance(nd, bool):
        return "an array (msgpack-numpy's) that is not laid out as ours are"
    if kind in (b"O", "O") or (isinstance(dtype, str) and "O" in dtype):
        return "an array of Python objects (a pickle)"
    if kind != b"" or not isinstance(dtype, str) or not PLAIN_DTYPE.fullmatch(dtype):
        return f"an array of dtype {dtype!r:.40} (kind {kind!r:.10}): only plain numbers are read (no objects, no records)"
    if not isinstance(data, bytes):
        return "an array whose data are not bytes"
    shape = item.get(b"shape", [])
    if not isinstance(shape, list) or not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in shape):
        return f"an array of shape {shape!r:.40}"
    if int(np.prod(shape, dtype=np.float64)) * np.dtype(dtype).itemsize != len(data):
        return f"an array of shape {shape!r:.40} that its {len(data):,} bytes do not fill"
    return None
