"""The one way the tools read a file that a person or another machine may have written.

Configs, run configs, summaries, SB3 model zips, checkpoints, snapshots, replay buffers and
evaluations all come through here: each reader checks size, shape, type and range, and turns
anything wrong into one :class:`agents.common.errors.UsageError` that names the file and what
was expected. A bug elsewhere still has its traceback. Nothing a file holds is run:

- YAML through a safe loader that refuses aliases (a "billion laughs" file expands nothing)
  and nesting deeper than :data:`MAX_DEPTH`;
- JSON with the same depth cap;
- zip members no larger than their cap, read without unpacking the rest;
- tensors with ``torch.load(weights_only=True)``, arrays with ``allow_pickle=False``;
- numbers range-checked (a step counter is an int in [0, 2**53), never a bool).
"""

from __future__ import annotations

import csv
import io
import json
import math
import warnings
import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import yaml
from yaml.events import AliasEvent

from agents.common.errors import UsageError
from ballenvs.npz import NpzError, read_npz, read_weights

#: Nesting deeper than this in a YAML or JSON file is refused (ours nest 3 or 4 levels).
MAX_DEPTH = 32
#: Text files larger than this (configs, summaries, manifests) are refused.
MAX_TEXT_BYTES = 4 * 2**20
#: A run's progress.csv: about 0.3 MB a million steps.
MAX_CSV_BYTES = 256 * 2**20
#: A zip member (model weights) larger than this is refused before it is read.
MAX_MEMBER_BYTES = 2 * 2**30
#: Counters (steps, episodes, updates) fit in a float without loss below this.
MAX_COUNT = 2**53
#: The largest seed numpy and torch take.
MAX_SEED = 2**32 - 1
#: The most envs a run steps at once (a section's n_envs, --n-envs): priced before built (docs/guarantees.md).
MAX_ENVS = 65536


class _PlainLoader(yaml.SafeLoader):
    """yaml.SafeLoader that refuses aliases and deep nesting, so a file's size bounds its cost."""

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(AliasEvent):
            mark = self.peek_event().start_mark
            raise yaml.YAMLError(f"an alias (*name) at line {mark.line + 1}: aliases are not accepted")
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.YAMLError(f"nesting deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


class _ZooLoader(_PlainLoader):
    """The RL Zoo writes a run's hyperparameters as an OrderedDict, tagged
    ``!!python/object/apply:collections.OrderedDict``: that one tag is read, as a dict of its
    pairs; every other Python tag is refused, as the plain loader refuses them."""


def _ordered_dict(loader: _ZooLoader, node: yaml.Node) -> dict[str, Any]:
    pairs = loader.construct_sequence(node, deep=True)
    items = pairs[0] if len(pairs) == 1 and isinstance(pairs[0], list) else pairs
    if not all(isinstance(pair, list) and len(pair) == 2 and isinstance(pair[0], str) for pair in items):
        raise yaml.YAMLError("an OrderedDict that is not a list of (name, value) pairs")
    return dict(items)


_ZooLoader.add_constructor("tag:yaml.org,2002:python/object/apply:collections.OrderedDict", _ordered_dict)


def read_text(path: str | Path, what: str, limit: int = MAX_TEXT_BYTES) -> str:
    """A UTF-8 text file of at most ``limit`` bytes."""
    path = Path(path)
    try:
        if path.exists() and not path.is_file():  # a FIFO or a device would block or never end
            raise UsageError(f"{what} {str(path)!r} is not a regular file")
        size = path.stat().st_size
        if size > limit:
            raise UsageError(f"{what} {str(path)!r} is {size:,} bytes; at most {limit:,} are read")
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{what} {str(path)!r} not found") from None
    except UnicodeDecodeError as error:
        raise UsageError(f"{what} {str(path)!r} is not UTF-8 text (byte {error.start}: {error.reason})") from None
    except OSError as error:
        raise UsageError(f"cannot read {what} {str(path)!r}: {error.strerror or type(error).__name__}") from None


def csv_rows(path: str | Path, what: str) -> list[dict[str, str]]:
    """The rows of a UTF-8 CSV file under its header line (a run's progress.csv), as text."""
    text = read_text(path, what, MAX_CSV_BYTES)
    try:
        return list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as error:
        raise UsageError(f"{what} {str(path)!r} is not CSV: {error}") from None


def csv_number(row: Mapping[str, str], column: str, what: str) -> float:
    """One cell of :func:`csv_rows` as a finite number."""
    try:
        value = float(row[column])
    except KeyError:
        raise UsageError(f"{what} has no column {column!r}") from None
    except (TypeError, ValueError):
        raise UsageError(f"{what}: {column} must be a number, got {row[column]!r}") from None
    return finite(value, f"{what}: {column}")


def parse_yaml(text: str, what: str, zoo: bool = False) -> Any:
    """YAML as plain data: no tags beyond the safe ones (``zoo``: and the RL Zoo's OrderedDict),
    no aliases, bounded depth."""
    try:
        return yaml.load(text, Loader=_ZooLoader if zoo else _PlainLoader)  # noqa: S506 (a SafeLoader)
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(error, "problem", None) or str(error).splitlines()[0]
        raise UsageError(f"{what} is not valid YAML{where}: {problem}") from None
    except RecursionError:
        raise UsageError(f"{what}: nesting deeper than {MAX_DEPTH} levels") from None


def read_yaml(path: str | Path, what: str) -> Any:
    return parse_yaml(read_text(path, what), f"{what} {str(path)!r}")


def parse_json(data: str | bytes, what: str) -> Any:
    """JSON as plain data, nesting at most :data:`MAX_DEPTH` levels."""
    text = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    # Count the brackets before parsing: json's own recursion on a deep file costs a RecursionError.
    level = deepest = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            level += 1
            deepest = max(deepest, level)
            if deepest > MAX_DEPTH:
                raise UsageError(f"cannot load {what}: JSON nested deeper than {MAX_DEPTH} levels")
        elif char in "]}":
            level -= 1
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as error:
        raise UsageError(f"cannot load {what}: not valid JSON ({type(error).__name__})") from None


def zip_member(archive: zipfile.ZipFile, name: str, what: str, limit: int = MAX_MEMBER_BYTES) -> bytes:
    """One member of a zip, refused if missing or larger than ``limit`` once unpacked (a zip bomb)."""
    try:
        info = archive.getinfo(name)
    except KeyError:
        raise UsageError(f"cannot load {what}: it has no {name!r} entry") from None
    if info.file_size > limit:
        raise UsageError(
            f"cannot load {what}: its {name!r} entry unpacks to {info.file_size:,} bytes; at most {limit:,} are read"
        )
    try:
        with archive.open(info) as member:
            data = member.read(limit + 1)
    except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, ValueError) as error:
        raise UsageError(f"cannot load {what}: its {name!r} entry does not unpack ({type(error).__name__})") from None
    if len(data) > limit:  # the header understated the size
        raise UsageError(f"cannot load {what}: its {name!r} entry unpacks to more than {limit:,} bytes")
    return data


def open_zip(path: str | Path, what: str) -> zipfile.ZipFile:
    try:
        return zipfile.ZipFile(path)
    except FileNotFoundError:
        raise UsageError(f"{what} {str(path)!r} not found") from None
    except (zipfile.BadZipFile, OSError, ValueError) as error:
        reason = error.strerror if isinstance(error, OSError) and error.strerror else type(error).__name__
        raise UsageError(f"cannot load {what} {str(path)!r}: not a zip file ({reason})") from None


def torch_weights(source: str | Path | bytes, what: str, device: Any = "cpu") -> Any:
    """Tensors and plain values only (``torch.load(weights_only=True)``); anything else is refused."""
    import torch

    try:
        with warnings.catch_warnings():  # torch warns about odd pickle protocols: the error below says it all
            warnings.simplefilter("ignore")
            stream = io.BytesIO(source) if isinstance(source, bytes) else source
            return torch.load(stream, map_location=device, weights_only=True)
    except FileNotFoundError:
        raise UsageError(f"cannot load {what}: not found") from None
    except Exception:  # torch raises many kinds for a file that is not plain tensors, with advice not to print
        raise UsageError(f"cannot load {what}: not a weights-only tensor file") from None


def npz_arrays(path: str | Path, what: str, names: tuple[str, ...]) -> dict[str, np.ndarray]:
    """The named arrays of an .npz, through :func:`ballenvs.npz.read_npz`: a regular file,
    plain numbers only, no array larger than the file holds for it."""
    try:
        return read_npz(path, what, names)
    except NpzError as error:
        raise UsageError(str(error)) from None


def weight_arrays(path: str | Path, what: str) -> dict[str, np.ndarray]:
    """Every array of a model file, through :func:`ballenvs.npz.read_weights`: the champion's
    refusals (a regular file, plain numbers, headers within the file, finite floats)."""
    try:
        return read_weights(path, what)
    except NpzError as error:
        raise UsageError(str(error)) from None


def count(value: Any, what: str, low: int = 0, high: int = MAX_COUNT - 1) -> int:
    """A counter read from a file: an int (not a bool) in [low, high]."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or not low <= int(value) <= high:
        raise UsageError(f"{what} must be an integer in [{low}, {high}], got {value!r}")
    return int(value)


def finite(value: Any, what: str) -> float:
    """A number read from a file: a finite int or float (not a bool)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.number)) or not math.isfinite(float(value)):
        raise UsageError(f"{what} must be a finite number, got {value!r}")
    return float(value)


def mapping_of(value: Any, what: str, keys: Mapping[str, type | tuple[type, ...]]) -> dict[str, Any]:
    """A dict holding at least ``keys``, each of the given type(s)."""
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a mapping, got {type(value).__name__}")
    for key, kind in keys.items():
        if key not in value:
            raise UsageError(f"{what} lacks {key!r}")
        if not isinstance(value[key], kind) or (
            kind is not bool and isinstance(value[key], bool) and bool not in _kinds(kind)
        ):
            raise UsageError(f"{what}: {key} must be {_describe(kind)}, got {type(value[key]).__name__}")
    return value


def _kinds(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def _describe(kind: type | tuple[type, ...]) -> str:
    return " or ".join(k.__name__ for k in _kinds(kind))
