"""Hyperparameters, each declared once: a dataclass field with its default, its range, whether
``--resume`` may change it, and what it means. Here: what several algorithms share (``QConfig``,
``DQNConfig``, ``Teaching``) and the configs the registry reads without importing torch (SB3's
DQN, our DQN, PQN, RLlib's PPO); an algorithm of our own may declare its own beside it, with
:func:`key` (``agents.algorithms.distill.DistillConfig``).

From these declarations come the checks of a config section (:func:`keys_of`, into
:class:`agents.common.configuration.config.Key`), the configs our agents are built from (the dataclasses
themselves), the keys a resumed run may change (:func:`resumable_keys`) and the table in the
docs (:func:`describe_keys`). Adding or renaming a key is its one line. The defaults are
stable-baselines3's where SB3 has the key (``tests/agents/common/configuration/test_hyperparameters.py`` holds
them to SB3's own).
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from agents.common.configuration.config import ConfigError, Key, schedule

_KINDS = (bool, int, float, dict, str)  # a field's kind: the first of these its annotation names


def key(
    default: Any,
    help: str,
    *,
    low: float | None = None,
    high: float | None = None,
    low_open: bool = False,
    also: tuple[Any, ...] = (),
    schedule: bool = False,
    resumable: bool = False,
) -> Any:
    """A hyperparameter: a dataclass field whose metadata says its range, meaning and resumability."""
    metadata = {"range": dict(low=low, high=high, low_open=low_open, also=also, schedule=schedule)}
    return dataclasses.field(default=default, metadata={**metadata, "help": help, "resumable": resumable})


def redefault(base: type, name: str, default: Any) -> Any:
    """``base``'s hyperparameter ``name`` with another default (an algorithm's own)."""
    inherited = next(f for f in dataclasses.fields(base) if f.name == name)
    return dataclasses.field(default=default, metadata=inherited.metadata)


def _kind(annotation: Any) -> type:
    members = typing.get_args(annotation) if isinstance(annotation, types.UnionType) else (annotation,)
    origins = {typing.get_origin(member) or member for member in members}
    return next(kind for kind in _KINDS if kind in origins)


def _hyperparameters(config_class: type) -> list[tuple[dataclasses.Field[Any], type]]:
    hints = typing.get_type_hints(config_class)
    return [(f, _kind(hints[f.name])) for f in dataclasses.fields(config_class) if "help" in f.metadata]


@functools.cache
def keys_of(config_class: type) -> Mapping[str, Key]:
    """The section keys ``config_class`` declares, as the config checks take them."""
    return types.MappingProxyType({f.name: Key(kind, **f.metadata["range"]) for f, kind in _hyperparameters(config_class)})


def resumable_keys(config_class: type) -> tuple[str, ...]:
    """The keys a resumed run may change; the others would change what the saved model is."""
    return tuple(f.name for f, _ in _hyperparameters(config_class) if f.metadata["resumable"])


def describe_keys(config_class: type) -> list[tuple[str, str, str, str]]:
    """(key, default, valid values, meaning) for each hyperparameter, as the docs' tables show them."""
    keys, rows = keys_of(config_class), []
    for f, _ in _hyperparameters(config_class):
        default = "none" if f.default is None else repr(f.default)
        valid = keys[f.name].describe() + ("; --resume may change it" if f.metadata["resumable"] else "")
        rows.append((f.name, default, valid, f.metadata["help"]))
    return rows


@dataclass
class QConfig:
    """What every Q-learner takes."""

    learning_rate: float | str = key(
        1e-4, "Adam's step size; lin_<x> falls linearly from x to 0 over the run", low=0, low_open=True, schedule=True,
        resumable=True,
    )  # fmt: skip
    gamma: float = key(0.99, "the discount", low=0, high=1)
    exploration_fraction: float = key(0.1, "the share of the run over which epsilon falls", low=0, high=1, resumable=True)
    exploration_initial_eps: float = key(1.0, "epsilon at the start", low=0, high=1, resumable=True)
    exploration_final_eps: float = key(0.05, "epsilon from the end of its fall on", low=0, high=1, resumable=True)
    max_grad_norm: float = key(10.0, "gradients are clipped to this norm", low=0, low_open=True, resumable=True)
    policy_kwargs: dict[str, Any] | str | None = key(None, "the network: net_arch, activation_fn, ... as SB3 takes them")

    def __post_init__(self) -> None:
        self.initial_learning_rate, self.linear_learning_rate = schedule(self.learning_rate)


@dataclass
class TailAveraging:
    """A key of every learner that keeps one network it plays (both DQN trainers, PQN, our PPO's actor)."""

    # Stochastic weight averaging (Izmailov et al., 2018; in deep RL, Nikishin et al., 2018): late in a run the
    # greedy policy still swings with small updates; the uniform mean of the weights over its last stretch does not.
    tail_averaging: float = key(
        0.0, "over the run's last this share, the network evaluated and saved is the uniform mean of the online "
        "one's weights over that share (the online one still acts and is snapshotted); 0: off",
        low=0, high=1,
    )  # fmt: skip


@dataclass
class DQNConfig(TailAveraging, QConfig):
    """DQN's hyperparameters as stable-baselines3 means them (counts are env steps summed over
    the envs; ``train_freq`` counts vector-env steps): both DQN trainers take these."""

    buffer_size: int = key(1_000_000, "transitions the replay buffer keeps", low=1)
    learning_starts: int = key(100, "env steps before the first update", low=0)
    batch_size: int = key(32, "transitions a minibatch samples", low=1)
    tau: float = key(1.0, "the target network's soft-update coefficient (1: a copy)", low=0, high=1, low_open=True)
    train_freq: int = key(4, "vector-env steps between updates", low=1)
    gradient_steps: int = key(1, "updates each time (-1: as many as env steps)", low=1, also=(-1,))
    target_update_interval: int = key(10_000, "env steps between target-network updates", low=1)
    n_steps: int = key(1, "n-step returns: rewards summed over this many steps before bootstrapping", low=1)
    augment_shift: int = key(
        0, "DrQ: each sampled frame stack (and its next one alike) shifted by up to this many pixels; 0: off", low=0, high=16
    )


@dataclass
class SB3DQNConfig(DQNConfig):
    """stable-baselines3's DQN: DQN's keys and SB3's own."""

    replay_buffer_kwargs: dict[str, Any] | str | None = key(None, "SB3's replay buffer options")
    optimize_memory_usage: bool = key(False, "SB3 keeps each observation once (not with timeout handling)")
    stats_window_size: int = key(100, "episodes SB3's logged means are over", low=1)


@dataclass
class OurDQNConfig(DQNConfig):
    """Our DQN (agents.algorithms.dqn): DQN's keys and ours."""

    double_q: bool = key(True, "Double-DQN targets (van Hasselt et al., 2016)")
    # ez-greedy (Dabney et al., 2021): long dashes reach states that single random steps seldom do.
    exploration_repeat: int = key(1, "an exploring env repeats its random action 1..this many steps", low=1, high=1000)
    # Polyak averaging of the weights: the greedy policy of a Q-network still learning flips with small changes of
    # its values; the average's changes slowly, and it is what the run plays, evaluates, snapshots and saves.
    policy_averaging: float = key(
        0.0, "the played network: the online one's moving average, moved this share of the way each update (0: off)",
        low=0, high=1,
    )  # fmt: skip

    def __post_init__(self) -> None:
        super().__post_init__()
        if self.policy_averaging > 0 and self.tail_averaging > 0:
            raise ConfigError(
                f"policy_averaging={self.policy_averaging!r} and tail_averaging={self.tail_averaging!r}: "
                "the played network is one average or the other; set one of them to 0"
            )


@dataclass
class Rollouts:
    """What every learner that trains on short rollouts and throws them away takes (PQN, our PPO)."""

    rollout_steps: int = key(32, "steps each env plays between updates", low=1)
    n_epochs: int = key(2, "passes over each rollout", low=1, high=1000)
    n_minibatches: int = key(4, "minibatches each pass is cut into", low=1)


@dataclass
class PQNConfig(Rollouts, TailAveraging, QConfig):
    """PQN's hyperparameters (agents.algorithms.pqn, zoo_configs/pqn.yml)."""

    learning_rate: float | str = redefault(QConfig, "learning_rate", "lin_2.5e-4")
    exploration_fraction: float = redefault(QConfig, "exploration_fraction", 0.2)
    q_lambda: float = key(0.65, "Q(lambda)'s lambda over each rollout", low=0, high=1)


@dataclass
class ClippedPolicy:
    """PPO's own keys under stable-baselines3's names: RLlib's PPO and ours take them."""

    gae_lambda: float = key(0.95, "GAE's lambda", low=0, high=1)
    clip_range: float = key(0.2, "how far the policy's probability ratio may move, clipped", low=0, low_open=True)
    ent_coef: float = key(0.0, "the entropy bonus's weight", low=0)
    vf_coef: float = key(0.5, "the value loss's weight", low=0)


@dataclass
class StartedFrom:
    """What a learner that starts from a model that plays takes (agents.algorithms.finetune, our PPO):
    calibration on the start's own games, then a pull to the start released as evaluations hold its
    level."""

    start_from: str = key("", "the model file or run folder the run starts from and is pulled towards")
    calibration_steps: int = key(
        50_000, "env steps at the start in which the start's policy plays and the values are fitted to its returns",
        low=0,
    )  # fmt: skip
    # Bounded so that the pull stays a number: a weight of 1e308 or a temperature of 1e-300 made NaN models.
    pull_weight: float = key(1.0, "the pull's weight beside the learner's loss at the start, and at most", low=0, high=100)
    pull_temperature: float = key(
        0.05, "the policies the pull compares are softmax(values / this): the start's (our PPO starts by playing it) "
        "and, for our DQN, the learner's", low=1e-3, high=100,
    )  # fmt: skip
    pull_margin: float = key(
        0.05, "how far below the start's level an evaluation's win rate may be and still hold it", low=0, high=1
    )
    pull_release: float = key(
        0.5,
        "the pull's weight is multiplied by this at each evaluation that holds the start's level, divided by it at "
        "each that falls",
        low=0,
        high=1,
        low_open=True,
    )


@dataclass
class SB3A2CConfig:
    """stable-baselines3's A2C (``--algo sb3_a2c``, zoo_configs/sb3_a2c.yml), its keys and defaults."""

    learning_rate: float | str = key(
        7e-4, "the optimiser's step size; lin_<x> falls linearly from x to 0 over the run", low=0, low_open=True,
        schedule=True, resumable=True,
    )  # fmt: skip
    n_steps: int = key(5, "steps each env plays between updates (the batch: n_steps x n_envs)", low=1)
    gamma: float = key(0.99, "the discount", low=0, high=1)
    gae_lambda: float = redefault(ClippedPolicy, "gae_lambda", 1.0)
    ent_coef: float = redefault(ClippedPolicy, "ent_coef", 0.0)
    vf_coef: float = redefault(ClippedPolicy, "vf_coef", 0.5)
    max_grad_norm: float = key(0.5, "gradients are clipped to this norm", low=0, low_open=True, resumable=True)
    use_rms_prop: bool = key(True, "RMSprop (A2C's paper), else Adam")
    normalize_advantage: bool = key(False, "each batch's advantages standardised")
    policy_kwargs: dict[str, Any] | str | None = key(
        None, "the network: net_arch (hidden widths), activation_fn, features_extractor_class, ... as SB3 takes them"
    )


@dataclass
class SB3PPOConfig(ClippedPolicy):
    """stable-baselines3's PPO (``--algo sb3_ppo``, zoo_configs/sb3_ppo.yml), its keys and defaults."""

    learning_rate: float | str = key(
        3e-4, "Adam's step size; lin_<x> falls linearly from x to 0 over the run", low=0, low_open=True, schedule=True,
        resumable=True,
    )  # fmt: skip
    n_steps: int = key(2048, "steps each env plays per iteration (the batch: n_steps x n_envs)", low=1)
    batch_size: int = key(64, "transitions a minibatch holds", low=1)
    n_epochs: int = key(10, "passes over each batch", low=1)
    gamma: float = key(0.99, "the discount", low=0, high=1)
    max_grad_norm: float = key(0.5, "gradients are clipped to this norm", low=0, low_open=True, resumable=True)
    policy_kwargs: dict[str, Any] | str | None = key(
        None, "the network: net_arch (hidden widths), activation_fn, features_extractor_class, ... as SB3 takes them"
    )


@dataclass
class RLlibPPOConfig(SB3PPOConfig):
    """Ray RLlib's PPO (agents.trainer.rllib, zoo_configs/rllib_ppo.yml) under stable-baselines3's
    PPO names, as the RL Zoo's ppo.yml writes them: an iteration plays ``n_steps`` in each of
    ``n_envs`` envs on every env runner, then trains on that batch."""

    n_steps: int = key(2048, "steps each env plays per iteration (the batch: n_steps x n_envs x env runners)", low=1)
    policy_kwargs: dict[str, Any] | str | None = key(
        None, "the network: net_arch (hidden widths) and activation_fn (tanh, relu) for vectors, conv_filters "
        "([[channels, kernel, stride], ...]) for pictures",
    )  # fmt: skip
    env_runners: int = key(0, "Ray actors that play, n_envs envs each (0: the trainer's process plays)", low=0, high=4096)
    learners: int = key(
        0, "Ray actors that train data-parallel, each on its share of the batch (0: the trainer's process trains)",
        low=0, high=1024,
    )  # fmt: skip


@dataclass
class TeacherGame:
    """Where a teacher plays: the student's env and options (set from the run's section, not a key)."""

    env_id: str = ""
    env_kwargs: dict[str, Any] = dataclasses.field(default_factory=dict)


@dataclass
class PredictsState:
    """A pixel learner whose network's features also learn to predict the game's state, in training
    only (agents.algorithms.privileged; our PPO's actor, our DQN's Q-network)."""

    state_prediction: float = key(
        0.0, "the weight of an auxiliary loss: the network's features predict the game's state (squared error on "
        "what obs_type=state shows, each number over its spread; env_kwargs state_info: true); 0: none",
        low=0, high=100,
    )  # fmt: skip
    # Set from the run's section when training reads the state (not keys): where, and its length.
    game: TeacherGame = dataclasses.field(default_factory=TeacherGame)
    state_size: int = 0


@dataclass
class StateDQNConfig(PredictsState, OurDQNConfig):
    """--algo custom's keys: our DQN's, and the state's prediction beside its TD loss (Lample and
    Chaplot 2017)."""


@dataclass
class Teaching:
    """What every learner with a teacher takes (agents.algorithms.distill, agents.algorithms.kickstart)."""

    teacher: str = key(
        "planner",
        "who labels the frames: a built-in player (its actions; the planner's action values), or a model file or run "
        "folder of the same env on obs_type=state (its Q-values)",
    )
    temperature: float = key(
        0.05, "labels are softmax(values / temperature) for a teacher with values (KL); one-hot for one without",
        low=0, low_open=True,
    )  # fmt: skip
    teacher_network: str = key(
        "", "expert iteration: a model file or run folder of the same game that a planner teacher's branches meet, in "
        "the learned champion's place (empty: the planner's own players)",
    )  # fmt: skip
    game: TeacherGame = dataclasses.field(default_factory=TeacherGame)


#: Keys that have new names: the old one is refused, naming the new.
RENAMED: dict[type, dict[str, str]] = {PQNConfig: {"n_steps": "rollout_steps"}}


# -- self-play's pool ------------------------------------------------------------------------------


def names_in(listed: str) -> tuple[str, ...]:
    """The names of a comma-separated list, blanks dropped."""
    return tuple(name.strip() for name in listed.split(",") if name.strip())


@dataclass(frozen=True)
class SelfPlay:
    """The pool's settings: the config section's ``self_play`` key, e.g. ``"dict(window=5)"``."""

    snapshot_steps: int = key(20_000, "env steps between snapshots of the learner into the pool", low=1)
    swap_steps: int = key(10_000, "env steps between changes of the opponent", low=1)
    p_latest: float = key(0.5, "the chance that the opponent is the learner as it is now", low=0, high=1)
    window: int = key(10, "how many of the latest snapshots the opponent is drawn from", low=1)
    scripted_share: float = key(0.0, "the share of the games that face the scripted players", low=0, high=1)
    scripted: str = key(
        "chaser,pusher",
        "the scripted players, in turn: built-in players, exploiter (the search exploiter), model files or run folders",
    )
    sampling: str = key("uniform", "how a snapshot is drawn: uniform, or pfsp (more often those the learner loses to)")
    scripted_sampling: str = key(
        "turns",
        "how the scripted players share the scripted games: turns (each its fixed games, in turn), or pfsp (at every "
        "swap, one game each and the rest by (1 - the learner's recent score against the player) ** pfsp_power)",
    )
    pfsp_power: float = key(2.0, "pfsp: a snapshot's weight is (1 - the learner's score against it) ** power", low=0, high=16)
    opponent_acts: str = key(
        "greedy",
        "how the learner and its snapshots act as the opponent: greedy (the argmax of the network's outputs), or sample "
        "(drawn from their softmax: a PPO's own policy, as RLlib's pool plays, whose modules always sample)",
    )
    evaluated: str = key(
        "",
        "more opponents every evaluation plays beside the built-ins (eval/win_rate_vs_<name>; counted in the return "
        "that picks the best model and in the evidence --algo finetune's pull hears): built-in players, the planner "
        "too, model files or run folders",
    )

    SAMPLINGS = ("uniform", "pfsp")
    SCRIPTED_SAMPLINGS = ("turns", "pfsp")
    OPPONENT_ACTS = ("greedy", "sample")

    @property
    def scripted_players(self) -> tuple[str, ...]:
        return names_in(self.scripted)

    @property
    def evaluated_players(self) -> tuple[str, ...]:
        return names_in(self.evaluated)

    @classmethod
    def from_config(cls, settings: Mapping[str, Any] | None) -> SelfPlay:
        """The settings of a section's ``self_play`` (:attr:`agents.common.configuration.config.Section.self_play`,
        read by the section), checked; none: the defaults."""
        config_class: type = cls  # a frozen dataclass's type, which mypy does not see as hashable
        settings, keys = settings or {}, keys_of(config_class)
        unknown = sorted(set(settings) - set(keys))
        if unknown:
            raise ConfigError(f"self_play key(s) {', '.join(unknown)} unknown; valid: {', '.join(keys)}")
        checked = cls(**{name: keys[name].check(f"self_play {name}", value) for name, value in settings.items()})
        if checked.sampling not in cls.SAMPLINGS:
            raise ConfigError(f"self_play sampling={checked.sampling!r}; valid: {', '.join(cls.SAMPLINGS)}")
        if checked.scripted_sampling not in cls.SCRIPTED_SAMPLINGS:
            raise ConfigError(
                f"self_play scripted_sampling={checked.scripted_sampling!r}; valid: {', '.join(cls.SCRIPTED_SAMPLINGS)}"
            )
        if checked.opponent_acts not in cls.OPPONENT_ACTS:
            raise ConfigError(f"self_play opponent_acts={checked.opponent_acts!r}; valid: {', '.join(cls.OPPONENT_ACTS)}")
        for key in ("scripted", "evaluated"):  # a name twice would silently take two players' games
            names = names_in(getattr(checked, key))
            twice = sorted({name for name in names if names.count(name) > 1})
            if twice:
                listed = getattr(checked, key)
                raise ConfigError(f"self_play {key}={listed!r} names {', '.join(twice)} more than once; name each once")
        return checked
