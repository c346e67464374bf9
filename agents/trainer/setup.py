"""A run's setup: every input checked before its run folder exists, then the folder and its
config.yml; and the envs a run makes from its setup.

:func:`prepare_run` checks in one pass, each room once: the flags (:mod:`agents.session.cli`),
the config section, from its file or the run it resumes (:mod:`agents.trainer.sections`), whom
it plays (:mod:`agents.session.opponents`), the env (one made to read its spaces), what the
section asks of those spaces (:func:`check_spaces`: frames to shift, the memory it will take), the
learner's own checks (the network against the observation space, the model to resume).
:func:`make_run_folder` then writes the folder. A resumed run takes its env, env options, n_envs,
vec env and frame stacking from the run it continues; a flag that contradicts them is refused.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeVar

from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from agents.artifacts.models import Resumed, check_spaces
from agents.artifacts.runs import CONFIG_NAME, new_run_dir, write_yaml
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import SelfPlay
from agents.common.configuration.memory import minibatch_size, rollout_steps
from agents.common.configuration.registry import Algorithm
from agents.common.errors import UsageError
from agents.common.threads import apply_threads
from agents.environments.envs import make_eval_vec, make_vec, probe_spaces, resolve_vec_env
from agents.session.cli import EVAL_EPISODES, EVAL_FREQ, check_flags
from agents.session.opponents import check_players
from agents.trainer.sections import run_section
from ballenvs.reference import reference_for

EVAL_SEED_OFFSET = 10_000  # evaluation envs never share seeds with training envs


#: What a learner's check() built for its start() (:class:`Checks`): each learner's own type.
Checked = TypeVar("Checked")
Checked_co = TypeVar("Checked_co", covariant=True)


@dataclass
class RunSetup(Generic[Checked]):
    algo: Algorithm
    section: Section
    timesteps: int
    vec_env: str
    device: str
    seed: int
    run_dir: Path  # Path() until make_run_folder makes it
    save_replay_buffer: bool
    checked: Checked  # what the learner's check() built, for its start()
    opponent: str | None = None  # whom it trains against: a built-in player, self, or None (the env's own)
    resume: Path | None = None  # the model file a resumed run continues from
    resume_buffer: Path | None = None  # the replay buffer it continues with, if its run saved one
    self_play: SelfPlay | None = None  # the pool's settings when the learner plays itself (--opponent self)
    threads: str = ""  # the CPU threads chosen for the device, in words (resolve_device)
    eval_freq: int = 0  # env steps between evaluations (0: none)
    eval_episodes: int = EVAL_EPISODES  # episodes of each evaluation, against each opponent
    # What the user is told once the run has started: nothing but its one line when it is refused.
    notes: tuple[str, ...] = ()
    # The folders above the run folder that make_run_folder made (the log folder, the algorithm's):
    # a run refused once started removes them with its own, and no folder that was there before.
    made_folders: tuple[Path, ...] = ()


class Checks(Protocol[Checked_co]):
    """A learner's own checks (:class:`agents.trainer.training.Learner`'s ``check``), run before the
    run folder exists: the config section, the observation and action spaces the learner will see,
    the model to resume (or None) and the device. Raises UsageError; returns what it built on the
    way (a config, a checkpoint read), which :func:`prepare_run` hands to ``start`` in
    :attr:`RunSetup.checked`, typed as the learner's own (``Learner[Checked]``): the learner itself
    keeps nothing between the two."""

    def check(
        self, section: Section, observation_space: spaces.Space, action_space: spaces.Space, resume: Path | None, device: str
    ) -> Checked_co: ...


def update_work(section: Section, observation_space: spaces.Space, action_space: spaces.Space) -> int | None:
    """About the multiply-adds of one of the run's updates: its network's forward pass on one
    observation (our networks', which stable-baselines3's DQN policies equal for the same keys), times
    its minibatch (``batch_size``, or a rollout's share: steps x envs / minibatches), times 3 for the
    backward pass. None where it cannot be told (a network not built from these keys)."""
    import torch

    from agents.algorithms.networks import QNetwork, network_spec
    from agents.common.networks.lean_cnn import multiply_adds
    from agents.common.tensors import to_tensor

    try:
        spec = network_spec(observation_space, int(getattr(action_space, "n", 1)), section.policy, section.network)
    except UsageError:
        return None
    sample = observation_space.sample()
    example = {k: v[None] for k, v in sample.items()} if isinstance(sample, dict) else sample[None]
    per_sample = multiply_adds(QNetwork(spec), to_tensor(example, torch.device("cpu")))
    return 3 * per_sample * minibatch_size(section)


def check_run_length(section: Section, timesteps: int) -> None:
    """A run long enough to learn at all: past its ``learning_starts``, and (a learner from rollouts)
    at least one rollout long; else one line, before anything is written."""
    starts = section.algo_kwargs.get("learning_starts")
    if isinstance(starts, int) and not isinstance(starts, bool) and timesteps <= starts:
        raise UsageError(
            f"--timesteps {timesteps} is not past learning_starts={starts}: the run would end before its first update; "
            f"valid: more than {starts} steps, or learning_starts below {timesteps}"
        )
    steps = rollout_steps(section)
    if steps is not None and steps * section.n_envs > timesteps:
        raise UsageError(
            f"rollout_steps={steps} x {section.n_envs} envs is {steps * section.n_envs} steps a rollout, past this run's "
            f"{timesteps}: it would end before its first update; valid: --timesteps of at least {steps * section.n_envs}, "
            f"or rollout_steps up to {max(timesteps // section.n_envs, 1)}"
        )


def prepare_run(
    args: argparse.Namespace, algo: Algorithm, learner: Checks[Checked], resumed: Resumed | None = None
) -> RunSetup[Checked]:
    """Check every input (see the module docstring), in one direction; ``resumed``: the run that
    ``--resume`` continues (:func:`agents.artifacts.models.resumed_run`). Makes nothing:
    :func:`make_run_folder` makes the folder once this passes (agents.compare checks only)."""
    if resumed is not None and resumed.algo != algo.name:
        raise UsageError(
            f"--resume {args.resume!r}: a {resumed.algo} run, not {algo.name}; python -m agents.train --resume "
            f"{args.resume} continues it (with its own algorithm)"
        )
    device, threads = check_flags(args)
    section, opponent = run_section(args, algo, resumed)
    settings = SelfPlay.from_config(section.self_play)  # whomever the run plays: its config.yml records them
    self_play = None if opponent is None else check_players(section.env_id, opponent, settings)
    if resumed is not None:
        vec_env, timesteps, seed = resumed.config["vec_env"], resumed.config["timesteps"], resumed.config["seed"]
    else:
        vec_env = resolve_vec_env(args.vec_env or "auto", section.env_id, section.n_envs)
        timesteps, seed = section.n_timesteps, 0
    observation_space, action_space = probe_spaces(section.env_id, section.env_kwargs, section.frame_stack)
    if self_play is not None and vec_env != "native":
        raise UsageError(f"--opponent self plays in the trainer's process: use --vec-env native, not {vec_env}")
    check_spaces(section, observation_space, action_space, algo.replay_buffer)
    eval_freq = given(args.eval_freq, section.eval_freq, EVAL_FREQ)
    eval_episodes = given(args.eval_episodes, section.eval_episodes, EVAL_EPISODES)
    timesteps, seed = args.timesteps or timesteps, seed if args.seed is None else args.seed
    if resumed is None:
        check_run_length(section, timesteps)
    if args.threads == "auto":  # now that the work is known: no more threads than it pays for
        threads = apply_threads(args.threads, update_work(section, observation_space, action_space))
    model = None if resumed is None else resumed.model
    checked = learner.check(section, observation_space, action_space, model, device)
    notes = () if resumed is None else resumed.notes
    if eval_freq > timesteps:  # else a run shorter than the default 25,000 steps would never be evaluated
        notes += (f"--eval-freq {eval_freq} is past this run's {timesteps} steps: it is evaluated once, at its end",)
        eval_freq = timesteps
    return RunSetup(
        algo=algo,
        section=section,
        timesteps=timesteps,
        vec_env=vec_env,
        device=device,
        seed=seed,
        run_dir=Path(),
        save_replay_buffer=args.save_replay_buffer,
        opponent=opponent,
        resume=model,
        resume_buffer=None if resumed is None else resumed.replay_buffer,
        self_play=self_play,
        checked=checked,
        threads=threads,
        eval_freq=eval_freq,
        eval_episodes=eval_episodes,
        notes=notes,
    )


def given(flag: int | None, config: int | None, default: int) -> int:
    """A setting from its flag, else from the config section, else its default."""
    return flag if flag is not None else config if config is not None else default


def make_run_folder(setup: RunSetup[Checked], log_dir: str) -> RunSetup[Checked]:
    """The checked run with its folder made, ``<log-dir>/<algo>/<env>_<n>/``, and its config.yml written."""
    above = (Path(log_dir) / setup.algo.name, Path(log_dir))  # deepest first, as they are removed
    absent = tuple(folder for folder in above if not folder.exists())
    made = dataclasses.replace(setup, run_dir=new_run_dir(log_dir, setup.algo.name, setup.section.env_id), made_folders=absent)
    write_yaml(made.run_dir / CONFIG_NAME, _run_config(made))
    return made


def _run_config(setup: RunSetup) -> dict[str, Any]:
    """What a run folder's config.yml records: enough to load its models and to resume it."""
    return {
        "algo": setup.algo.name,
        "env_id": setup.section.env_id,
        "seed": setup.seed,
        "device": setup.device,
        "vec_env": setup.vec_env,
        "timesteps": setup.timesteps,
        "resumed_from": str(setup.resume) if setup.resume else None,
        "save_replay_buffer": setup.save_replay_buffer,
        "opponent": setup.opponent,
        "hyperparams": setup.section.as_zoo_section(),
    }


def make_train_env(setup: RunSetup, make: Callable[..., Any] = make_vec, opponent: Any = None) -> Any:
    """The run's training envs, monitored into its folder; ``make``: how (make_vec's signature);
    ``opponent``: a player object to play instead of the config's (self-play)."""
    s = setup.section
    env_kwargs = s.env_kwargs if opponent is None else {**s.env_kwargs, "opponent": opponent}
    # Monitor files in the run folder itself, where the RL Zoo's plot_train reads them.
    return make(s.env_id, env_kwargs, s.n_envs, setup.seed, setup.vec_env, s.frame_stack, str(setup.run_dir))


def make_eval_envs(setup: RunSetup, episodes: int) -> dict[str, VecEnv]:
    """The envs evaluations play on: the run's own, or, in self-play, one per built-in opponent."""
    s = setup.section
    if setup.self_play is None:
        return {"": make_eval_vec(s.env_id, s.env_kwargs, s.frame_stack, episodes)}
    return {
        name: make_eval_vec(s.env_id, {**s.env_kwargs, "opponent": name}, s.frame_stack, episodes)
        for name in reference_for(s.env_id).yardstick_players
    }
