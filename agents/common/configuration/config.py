"""The values of hyperparameter files in the RL Baselines3 Zoo format (read by
:mod:`agents.common.configuration.config_files`) and of the command line's overrides, checked before any run.

One section per env id. Keys mean what they mean to stable-baselines3 (plus the zoo's
``n_timesteps``, ``policy``, ``n_envs``, ``frame_stack`` and ``env_kwargs``), so every trainer
and ``python -m rl_zoo3.train`` read a file the same way. Nothing in a file runs: YAML through
``safe_load``, and ``policy_kwargs``-style strings such as ``"dict(net_arch=[64, 64])"`` parsed
by :func:`parse_kwargs` against a whitelist, never ``eval``-ed. Each algorithm declares its keys
as :class:`Key` entries (type, range, schedule); :func:`build_section` checks every value.
"""

from __future__ import annotations

import ast
import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from agents.common.errors import ConfigError
from agents.common.readers import MAX_COUNT, MAX_ENVS

# -- values ------------------------------------------------------------------------------------

_LINEAR_SCHEDULE = re.compile(r"^lin_([0-9.eE+-]+)$")
_BOOLEAN_WORDS = {"true": True, "yes": True, "on": True, "false": False, "no": False, "off": False}
_BARE_WORD = re.compile(r"^[A-Za-z_./~][\w./~-]*$")  # a word, or a path (a model file, a run folder)


def schedule(value: float | str) -> tuple[float, bool]:
    """A schedulable value as (initial value, whether it falls linearly to 0 over training):
    a number, or the zoo's ``lin_<number>``."""
    if isinstance(value, str):
        match = _LINEAR_SCHEDULE.match(value)
        try:
            return float(match.group(1)), True  # type: ignore[union-attr]
        except (AttributeError, ValueError):
            raise ConfigError(f"schedule {value!r} is not a number or lin_<number>") from None
    return float(value), False


def _huge(value: Any) -> bool:
    """A number past any count a run reaches (2^53: floats no longer hold every integer there)."""
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) and abs(value) >= MAX_COUNT


@dataclass(frozen=True)
class Key:
    """What a hyperparameter may be: ``kind`` (int, float, bool, str or dict), a range
    [``low``, ``high``] (``low_open``: excluding ``low``), other valid values (``also``), and
    whether the zoo's ``lin_<x>`` schedule is accepted. A dict key also takes the zoo's
    ``"dict(...)"`` strings, parsed by :func:`parse_kwargs`."""

    kind: type
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    also: tuple[Any, ...] = ()
    schedule: bool = False

    def describe(self) -> str:
        kind = {int: "an integer", float: "a number", bool: "True or False", str: "a word", dict: "a dict"}[self.kind]
        if self.low is not None and self.high is not None:
            kind += f" in {'(' if self.low_open else '['}{self.low:g}, {self.high:g}]"
        elif self.low is not None:
            kind += f" {'>' if self.low_open else '>='} {self.low:g}"
        for value in self.also:
            kind += f", or {value!r}"
        if self.schedule:
            kind += ", or lin_<number> for a linear schedule"
        return kind

    def check(self, name: str, value: Any) -> Any:
        """``value`` as the trainers take it (ints as ints, floats as floats), or a ConfigError."""
        if self.schedule and isinstance(value, str) and _LINEAR_SCHEDULE.match(value):
            try:
                self.check(name, schedule(value)[0])
            except ConfigError:
                raise ConfigError(f"hyperparameter {name}={value!r} must be {self.describe()}") from None
            return value
        if value in self.also and not isinstance(value, bool):
            return value
        if self.kind is dict:
            parse_kwargs(name, value)  # a string is checked; the value stays as written, for config.yml
            return value
        checked = self._typed(value)
        if self.kind is int and checked is None and _huge(value):
            raise ConfigError(f"hyperparameter {name}={value!r} must be {self.describe()}, below 2^53")
        if checked is None or not self._in_range(checked):
            raise ConfigError(f"hyperparameter {name}={value!r} must be {self.describe()}")
        return checked

    def _typed(self, value: Any) -> Any:
        number = isinstance(value, (int, float)) and not isinstance(value, bool)
        if self.kind is bool:
            return bool(value) if isinstance(value, bool) or (number and value in (0, 1)) else None
        if self.kind is int:  # a count past 2^53 is no count a run reaches (and floats no longer hold it exactly)
            whole = number and math.isfinite(value) and float(value).is_integer() and abs(value) < MAX_COUNT
            return int(value) if whole else None
        if self.kind is float:
            return float(value) if number and math.isfinite(value) else None
        return value if isinstance(value, str) else None

    def _in_range(self, value: Any) -> bool:
        if self.kind not in (int, float):
            return True
        above = self.low is None or (value > self.low if self.low_open else value >= self.low)
        return above and (self.high is None or value <= self.high)


#: The zoo's own keys, which configure the run rather than the algorithm.
RUN_KEYS: dict[str, Key] = {
    "n_timesteps": Key(int, 1),
    "policy": Key(str),
    "n_envs": Key(int, 1, MAX_ENVS),
    "frame_stack": Key(int, 1, 64),
    "env_kwargs": Key(dict),
    "self_play": Key(dict),  # the self-play pool's settings (agents.twoplayer.selfplay.SelfPlay), used with --opponent self
    # How the run is evaluated where the game needs more than --eval-freq's and --eval-episodes'
    # defaults (the flags, when given, win): runs told apart by a few points need more games.
    "eval_freq": Key(int, 0, MAX_COUNT - 1),
    "eval_episodes": Key(int, 1, MAX_COUNT - 1),
}

#: The run keys of ours that the RL Zoo does not know: left out of the zoo's copy of a section.
NOT_ZOO_KEYS = ("self_play", "eval_freq", "eval_episodes")


# -- the zoo's kwargs strings, without eval ------------------------------------------------------

#: Names a kwargs string may use: activation functions and optimisers, as the zoo's configs write them.
_ACTIVATIONS = ("ReLU", "Tanh", "ELU", "LeakyReLU", "SiLU", "GELU", "Sigmoid", "Softplus", "Mish", "Identity")
_OPTIMIZERS = ("Adam", "AdamW", "RMSprop", "SGD")


def _allowed_names() -> dict[str, Any]:
    import torch
    from stable_baselines3.common.sb2_compat.rmsprop_tf_like import RMSpropTFLike

    from agents.common.networks.lean_cnn import LeanCNN

    names: dict[str, Any] = {"RMSpropTFLike": RMSpropTFLike, "LeanCNN": LeanCNN}
    for prefix in ("nn", "th.nn", "torch.nn"):
        names |= {f"{prefix}.{name}": getattr(torch.nn, name) for name in _ACTIVATIONS}
    for prefix in ("th.optim", "torch.optim"):
        names |= {f"{prefix}.{name}": getattr(torch.optim, name) for name in _OPTIMIZERS}
    return names


def _dotted(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = _dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


#: A kwargs string longer than this is refused before it is parsed (ours are under 200 characters).
MAX_KWARGS_CHARS = 10_000


def parse_kwargs(key: str, value: Any) -> dict[str, Any]:
    """``policy_kwargs``-style values as the zoo writes them: a dict, or a string such as
    ``"dict(net_arch=[256, 256], activation_fn=nn.ReLU)"``. The string is parsed, not run: it
    may hold numbers, strings, True/False/None, lists, tuples, ``{...}`` and ``dict(...)``, and
    the names of activation functions and optimisers; anything else is a ConfigError."""
    if value is None or isinstance(value, dict):
        return dict(value or {})
    if not isinstance(value, str):
        raise ConfigError(f"{key} must be a dict or a 'dict(...)' string, got {value!r}")
    names = _allowed_names()

    def literal(node: ast.AST) -> Any:
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, str, bool, type(None))):
            return node.value
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
            operand = literal(node.operand)
            if isinstance(operand, (int, float)) and not isinstance(operand, bool):
                return -operand if isinstance(node.op, ast.USub) else operand
        if isinstance(node, (ast.List, ast.Tuple)):
            items = [literal(item) for item in node.elts]
            return items if isinstance(node, ast.List) else tuple(items)
        if isinstance(node, ast.Dict) and None not in node.keys:
            keys = [literal(k) for k in node.keys if k is not None]
            if all(isinstance(k, (int, float, str, bool, type(None))) for k in keys):
                return dict(zip(keys, (literal(v) for v in node.values)))
            raise ConfigError(f"{key} {value!r}: a dict's keys must be numbers or strings, got {ast.unparse(node)!r}")
        if isinstance(node, ast.Call) and _dotted(node.func) == "dict" and not node.args:
            if all(keyword.arg is not None for keyword in node.keywords):
                return {str(keyword.arg): literal(keyword.value) for keyword in node.keywords}
        dotted = _dotted(node)
        if dotted is not None and dotted in names:
            return names[dotted]
        shown = sorted(name for name in names if not name.startswith(("th.", "torch.")))
        raise ConfigError(
            f"{key} {value!r}: {ast.unparse(node)!r} is not allowed; a kwargs string may hold numbers, strings, "
            f"True/False/None, lists, dict(...) and the names {', '.join(shown)}"
        )

    if len(value) > MAX_KWARGS_CHARS:
        raise ConfigError(f"{key}: a kwargs string of {len(value):,} characters; at most {MAX_KWARGS_CHARS:,} are read")
    try:
        tree = ast.parse(value.strip(), mode="eval")
        result = literal(tree.body)
    except SyntaxError as error:
        raise ConfigError(f"{key} {value[:80]!r} does not parse: {error.msg}") from None
    except (RecursionError, MemoryError):
        raise ConfigError(f"{key} {value[:80]!r}...: nested too deeply to read") from None
    if not isinstance(result, dict):
        raise ConfigError(f"{key} {value!r} must be a dict")
    return result


# -- overrides and sections --------------------------------------------------------------------


def parse_value(text: str) -> Any:
    """One command-line value: a Python literal (``1.0e-4``, ``[64, 64]``, ``'text'``), a boolean
    word (true/false, yes/no, on/off), a bare word (``CnnPolicy``, ``lin_2.5e-4``) or a
    ``dict(...)`` string (checked later, by :func:`parse_kwargs`)."""
    if text.lower() in _BOOLEAN_WORDS:
        return _BOOLEAN_WORDS[text.lower()]
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        if _BARE_WORD.match(text) or text.startswith("dict("):
            return text
        raise ValueError(text) from None


def parse_overrides(pairs: Iterable[str], flag: str) -> dict[str, Any]:
    """``["key=value", ...]`` from the command line, values read by :func:`parse_value`."""
    parsed: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key:
            raise ConfigError(f"{flag} expects key=value, got {pair!r}")
        try:
            parsed[key] = parse_value(text)
        except ValueError:
            raise ConfigError(
                f"{flag} value for {key!r} does not parse: {text!r} (expected a number, true/false, a list, or a word)"
            ) from None
    return parsed


@dataclass(frozen=True)
class Schema:
    """What a section is checked against: an algorithm's ``keys`` (besides the zoo's run keys),
    the ``owner`` its messages name (``--algo NAME``), and its ``renamed`` keys (old name to new)."""

    keys: Mapping[str, Key]
    owner: str
    renamed: Mapping[str, str] = field(default_factory=dict)


@dataclass
class Section:
    """One env's hyperparameters, split into what the run needs and what the algorithm takes.
    ``env_kwargs`` and ``self_play`` are read (a ``"dict(...)"`` string parsed), as is
    ``policy_kwargs`` into ``network``; ``algo_kwargs`` keep their values as written, for config.yml."""

    env_id: str
    policy: str
    n_timesteps: int
    n_envs: int = 1
    frame_stack: int | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    algo_kwargs: dict[str, Any] = field(default_factory=dict)
    self_play: dict[str, Any] | None = None
    network: dict[str, Any] = field(default_factory=dict)
    eval_freq: int | None = None  # None: --eval-freq's default
    eval_episodes: int | None = None  # None: --eval-episodes' default

    def as_zoo_section(self) -> dict[str, Any]:
        """Back to the zoo's flat form, as written to a run's config.yml."""
        section: dict[str, Any] = {"policy": self.policy, "n_timesteps": self.n_timesteps, "n_envs": self.n_envs}
        if self.frame_stack:
            section["frame_stack"] = self.frame_stack
        if self.env_kwargs:
            section["env_kwargs"] = dict(self.env_kwargs)
        if self.self_play is not None:
            section["self_play"] = dict(self.self_play)
        for key in ("eval_freq", "eval_episodes"):
            if getattr(self, key) is not None:
                section[key] = getattr(self, key)
        section.update(self.algo_kwargs)
        return section


def build_section(env_id: str, raw: Mapping[str, Any], overrides: Mapping[str, Any], schema: Schema) -> Section:
    """Merge the overrides into the raw section and check every key and value against the
    schema's keys and the zoo's run keys; a renamed key is refused naming its new name."""
    merged = {**raw, **overrides}
    keys = {**RUN_KEYS, **schema.keys}
    for old, new in schema.renamed.items():
        if old in merged:
            raise ConfigError(
                f"hyperparameter {old!r} of {schema.owner} is now called {new!r}: rename it in section {env_id!r}"
            )
    unknown = sorted(set(merged) - set(keys))
    if unknown:
        raise ConfigError(
            f"unknown hyperparameter(s) for {schema.owner}: {', '.join(unknown)}; valid: {', '.join(sorted(keys))}"
        )
    for key in ("policy", "n_timesteps"):
        if key not in merged:
            raise ConfigError(f"section {env_id!r} needs {key!r}")
    checked = {key: keys[key].check(key, value) for key, value in merged.items()}
    self_play = checked.pop("self_play", None)
    frame_stack = checked.pop("frame_stack", 1)
    return Section(
        env_id=env_id,
        policy=checked.pop("policy"),
        n_timesteps=checked.pop("n_timesteps"),
        n_envs=checked.pop("n_envs", 1),
        frame_stack=frame_stack if frame_stack > 1 else None,  # a stack of one frame is no stack
        env_kwargs=parse_kwargs("env_kwargs", checked.pop("env_kwargs", None)),
        self_play=None if self_play is None else parse_kwargs("self_play", self_play),
        network=parse_kwargs("policy_kwargs", checked.get("policy_kwargs")),
        eval_freq=checked.pop("eval_freq", None),
        eval_episodes=checked.pop("eval_episodes", None),
        algo_kwargs=checked,
    )
