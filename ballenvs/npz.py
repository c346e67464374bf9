""".npz files that anyone may have written, read without trusting them (numpy only, no pickle).

Every array file the tools read comes through :func:`read_npz`: model files (the champion's,
:mod:`ballenvs.duel.champion`, and RLlib runs' weights, :mod:`agents.rllib.network`) through
:func:`read_weights`, which adds their refusals (numbers only, finite floats), and the rest
through :func:`agents.common.readers.npz_arrays`. Before a byte of an array is read, the file must be a regular file (a FIFO or
a device is refused before it is opened, so nothing hangs or is written), its arrays plain
numbers (no objects), and each array's header must ask for no more bytes than the file holds
for it: a 100-byte file cannot make us allocate 37 GiB.
"""

from __future__ import annotations

import math
import os
import stat
import zipfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

#: A compressed member's bytes can't be checked against the file's size: at most this many are unpacked.
MAX_UNPACKED_BYTES = 2 * 2**30
#: A model file larger than this is refused before it is opened (ours are well under 64 MB).
MAX_WEIGHTS_BYTES = 256 * 2**20
#: A model file with more arrays than this is refused (an MLP or CNN has tens).
MAX_ARRAYS = 1_000


class NpzError(ValueError):
    """An .npz that cannot be used; the message names the file and what is wrong, in one line."""


def regular_file_size(path: str | Path, what: str) -> int:
    """The size of ``path``, which must be an existing regular file (followed through links)."""
    try:
        status = os.stat(path)
    except FileNotFoundError:
        raise NpzError(f"{what} {str(path)!r} not found") from None
    except OSError as error:
        raise NpzError(f"cannot read {what} {str(path)!r}: {error.strerror or type(error).__name__}") from None
    if not stat.S_ISREG(status.st_mode):
        raise NpzError(f"{what} {str(path)!r} is not a regular file")
    return status.st_size


def _read_member(archive: zipfile.ZipFile, name: str, what: str, max_bytes: int) -> np.ndarray:
    try:
        info = archive.getinfo(f"{name}.npy")
    except KeyError:
        raise NpzError(f"{what}: it has no array {name!r}") from None
    # Stored (np.savez): the array's bytes are in the file; compressed: bounded by max_bytes.
    room = info.compress_size if info.compress_type == zipfile.ZIP_STORED else min(info.file_size, max_bytes)
    with archive.open(info) as member:
        version = np.lib.format.read_magic(member)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran_order, dtype = read_header(member, max_header_size=10_000)
        if dtype.hasobject:
            raise NpzError(f"{what}: its array {name!r} holds Python objects; only numbers are read")
        wanted = math.prod(shape) * dtype.itemsize
        if wanted > min(room, max_bytes):
            raise NpzError(f"{what}: its array {name!r} claims {wanted:,} bytes, more than the file holds for it")
        data = member.read(wanted)
    if len(data) != wanted:
        raise NpzError(f"{what}: its array {name!r} is cut short ({len(data):,} of {wanted:,} bytes)")
    return np.frombuffer(data, dtype=dtype).reshape(shape, order="F" if fortran_order else "C").copy()


def read_npz(path: str | Path, what: str, names: Sequence[str], max_bytes: int = MAX_UNPACKED_BYTES) -> dict[str, np.ndarray]:
    """The named arrays of the .npz at ``path`` (``what`` names it in errors), each of at most
    ``max_bytes``; anything wrong is one :class:`NpzError`."""
    label = f"cannot load {what} {str(path)!r}"
    regular_file_size(path, what)
    try:
        with zipfile.ZipFile(path) as archive:
            return {name: _read_member(archive, name, label, max_bytes) for name in names}
    except NpzError:
        raise
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as error:
        raise NpzError(f"{label}: not an .npz of plain arrays ({type(error).__name__})") from None


def read_weights(path: str | Path, what: str, max_bytes: int = MAX_WEIGHTS_BYTES) -> dict[str, np.ndarray]:
    """Every array of the model file at ``path``, through :func:`read_npz`'s checks and a model's:
    the file at most ``max_bytes``, at most :data:`MAX_ARRAYS` arrays, each of numbers (bool, int
    or float: no strings, no records), every float finite; anything wrong is one :class:`NpzError`."""
    label = f"cannot load {what} {str(path)!r}"
    size = regular_file_size(path, what)
    if size > max_bytes:
        raise NpzError(f"{what} {str(path)!r} is {size:,} bytes; at most {max_bytes:,} are read")
    try:
        with zipfile.ZipFile(path) as archive:
            members = archive.namelist()
    except (zipfile.BadZipFile, OSError, EOFError, ValueError, NotImplementedError) as error:
        raise NpzError(f"{label}: not an .npz of plain arrays ({type(error).__name__})") from None
    if len(members) > MAX_ARRAYS:
        raise NpzError(f"{label}: {len(members):,} arrays; a model file holds at most {MAX_ARRAYS:,}")
    strays = [name for name in members if not name.endswith(".npy")]
    if strays:
        raise NpzError(f"{label}: {strays[0]!r} is not an array (an .npz holds NAME.npy members)")
    arrays = read_npz(path, what, [name[: -len(".npy")] for name in members], max_bytes)
    for name, array in arrays.items():
        if array.dtype.kind not in "biuf":
            raise NpzError(f"{label}: its array {name!r} is {array.dtype}; a model holds numbers (bool, int, float)")
        if array.dtype.kind == "f" and not np.isfinite(array).all():
            raise NpzError(f"{label}: its array {name!r} holds NaN or infinite values")
    return arrays
