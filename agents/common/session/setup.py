"""A run's setup: every input checked before its run folder exists, then the folder and its
config.yml; and the envs a run makes from its setup.

Everything that can be wrong is checked before the folder exists: flags, config file and
values, env options (by making one env), the memory it will take (:mod:`agents.common.session.memory`),
self-play's players, the learner's own checks (the network against the observation space, the
model to resume), the log folder. A resumed run takes its env, env options, n_envs, vec env and
frame stacking from the run it continues; a flag that contradicts them is refused.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from gymnasium import spaces
from stable_baselines3.common.vec_env import VecEnv

from agents.common.artifacts.models import find_model, resume_model
from agents.common.artifacts.runs import (
    BEST_MODEL,
    CONFIG_NAME,
    FINAL_MODEL,
    INTERRUPTED_MODEL,
    REPLAY_BUFFER,
    new_run_dir,
    read_config,
    write_yaml,
)
from agents.common.configuration.config import Section, load_section, parse_overrides
from agents.common.configuration.hyperparameters import SelfPlay
from agents.common.configuration.registry import Algorithm, algorithm
from agents.common.environments.envs import check_env_id, make_eval_vec, make_vec, resolve_vec_env
from agents.common.errors import UsageError
from agents.common.session.cli import DEFAULT_ENV, check_flags, resolve_device
from agents.common.session.memory import check_memory, check_replay_memory
from ballenvs import ENV_IDS
from ballenvs.reference import reference_for

EVAL_SEED_OFFSET = 10_000  # evaluation envs never share seeds with training envs


@dataclass
class RunSetup:
    algo: Algorithm
    section: Section
    timesteps: int
    vec_env: str
    device: str
    seed: int
    run_dir: Path
    save_replay_buffer: bool
    resume: Path | None = None  # the model file a resumed run continues from
    resume_buffer: Path | None = None  # the replay buffer it continues with, if its run saved one
    self_play: SelfPlay | None = None  # the pool's settings when the learner plays itself (--opponent self)
    checked: Any = None  # what the learner's check() built, for its start()


class Checks(Protocol):
    """A learner's own checks (:class:`agents.common.session.training.Learner`'s ``check``), run before the
    run folder exists: the config section, the observation and action spaces the learner will see,
    the model to resume (or None) and the device. Raises UsageError; returns what it built on the
    way (a config, a checkpoint read), which :func:`prepare_run` hands to ``start`` in
    :attr:`RunSetup.checked`: the learner itself keeps nothing between the two."""

    def check(
        self, section: Section, observation_space: spaces.Space, action_space: spaces.Space, resume: Path | None, device: str
    ) -> Any: ...


def section_of(run_config: dict[str, Any]) -> Section:
    """The config section a run trained with, as written in its config.yml."""
    algo = algorithm(run_config["algo"])
    return algo.section(run_config["env_id"], run_config["hyperparams"], {})


def probe_spaces(env_id: str, env_kwargs: dict[str, Any], frame_stack: int | None) -> tuple[spaces.Space, spaces.Space]:
    """The observation and action spaces the learner sees (frame-stacked, channel-first); bad env
    options fail here, in this process, as one line."""
    try:
        probe = make_vec(env_id, env_kwargs, 1, None, "dummy", frame_stack)
    except (ValueError, TypeError) as error:
        raise UsageError(f"{env_id} options {env_kwargs}: {error}") from None
    try:
        return probe.observation_space, probe.action_space
    finally:
        probe.close()


def spaces_of(run_config: dict[str, Any]) -> tuple[spaces.Space, spaces.Space]:
    """The spaces a run's model sees, from its config (its values checked first, and its networks
    priced against the machine's memory before a loader builds them)."""
    section = section_of(run_config)
    observation_space, action_space = probe_spaces(section.env_id, section.env_kwargs, section.frame_stack)
    check_memory(section, observation_space, action_space)
    return observation_space, action_space


def _contradicts(flag: str, given: Any, recorded: Any) -> None:
    if given is not None and given != recorded:
        raise UsageError(f"--resume: {flag} {given!r} contradicts the resumed run's {recorded!r}; leave {flag} out")


def _resumed_section(args: argparse.Namespace, algo: Algorithm, source: dict[str, Any]) -> tuple[Section, str]:
    """The resumed run's section and vec env, with the resumable hyperparameters overridden."""
    hyper = source["hyperparams"]
    _contradicts("--env", args.env, source["env_id"])
    _contradicts("--n-envs", args.n_envs, hyper.get("n_envs", 1))
    _contradicts("--vec-env", args.vec_env, source.get("vec_env"))
    _contradicts("--opponent", args.opponent, source.get("opponent"))
    _contradicts("--teacher", getattr(args, "teacher", None), hyper.get("teacher"))
    if args.env_kwargs:
        raise UsageError(f"--resume: --env-kwargs cannot change the resumed run's env options {hyper.get('env_kwargs', {})}")
    if args.config is not None:
        raise UsageError("--resume: the hyperparameters are the resumed run's; change the resumable ones with --hyperparams")
    overrides = parse_overrides(args.hyperparams, "--hyperparams")
    resumable = algo.resumable_keys
    fixed = sorted(key for key, value in overrides.items() if key not in resumable and value != hyper.get(key))
    if fixed:
        raise UsageError(f"--resume: {', '.join(fixed)} cannot change in a resumed run; these can: {', '.join(resumable)}")
    section = algo.section(source["env_id"], hyper, overrides)
    return section, source["vec_env"]


def prepare_run(
    args: argparse.Namespace, algo: Algorithm, learner: Checks | None = None, make_folder: bool = True
) -> RunSetup:
    """Check every input, then create ``<log-dir>/<algo>/<env>_<n>/`` with its config.yml
    (``make_folder=False``: check only, as agents.compare does before its own folder). In one
    direction: the flags, the section (the config's or the resumed run's), the players, the env
    (one made to read its spaces), the memory, the learner's own checks, the folder."""
    check_flags(args)
    device = resolve_device(args.device, args.threads)
    resume = resume_buffer = None
    if args.resume:
        resume, source_dir, source = resume_model(args.resume)
        if source["algo"] != algo.name:
            raise UsageError(
                f"--resume {args.resume!r}: a {source['algo']} run, not {algo.name}; python -m agents.train --resume "
                f"{args.resume} continues it (with its own algorithm)"
            )
        section, vec_env = _resumed_section(args, algo, source)
        opponent = source.get("opponent")
        timesteps = args.timesteps or source["timesteps"]
        seed = source["seed"] if args.seed is None else args.seed
        resume_buffer = _resumed_buffer(resume, source_dir, source)
    else:
        section, opponent = _new_section(args, algo)
        vec_env = resolve_vec_env(args.vec_env or "auto", section.env_id, section.n_envs)
        timesteps = args.timesteps or section.n_timesteps
        seed = 0 if args.seed is None else args.seed
    self_play = _check_players(section, opponent, vec_env)
    observation_space, action_space = probe_spaces(section.env_id, section.env_kwargs, section.frame_stack)
    check_memory(section, observation_space, action_space)
    if algo.replay_buffer:
        check_replay_memory(section.algo_kwargs.get("buffer_size", 1_000_000), observation_space)
    checked = None if learner is None else learner.check(section, observation_space, action_space, resume, device)
    if args.eval_freq > timesteps:  # else a run shorter than the default 25,000 steps would never be evaluated
        print(f"note: --eval-freq {args.eval_freq} is past this run's {timesteps} steps: it is evaluated once, at its end")
        args.eval_freq = timesteps
    setup = RunSetup(algo, section, timesteps, vec_env, device, seed, Path(), args.save_replay_buffer)
    setup.resume, setup.resume_buffer, setup.self_play, setup.checked = resume, resume_buffer, self_play, checked
    if make_folder:
        setup.run_dir = new_run_dir(args.log_dir, algo.name, section.env_id)
        write_yaml(setup.run_dir / CONFIG_NAME, _run_config(setup, opponent))
    return setup


def _new_section(args: argparse.Namespace, algo: Algorithm) -> tuple[Section, str | None]:
    """A new run's section (its config file's, with the command line's changes) and its opponent."""
    env_id = args.env or DEFAULT_ENV
    check_env_id(env_id)
    config = args.config or algo.config_path()
    overrides = parse_overrides(args.hyperparams, "--hyperparams")
    if getattr(args, "teacher", None) is not None:
        overrides["teacher"] = args.teacher
    section = algo.section(env_id, load_section(config, env_id), overrides)
    section.env_kwargs.update(parse_overrides(args.env_kwargs, "--env-kwargs"))
    if section.env_kwargs.get("render_mode") is not None:
        raise UsageError(
            f"--env-kwargs render_mode={section.env_kwargs['render_mode']!r}: a run trains unrendered "
            "(watch a model with agents.evaluate --render or --video)"
        )
    section.n_envs = args.n_envs or section.n_envs
    opponent = args.opponent
    if section.env_kwargs.get("opponent") == "self":  # a section that trains by self-play, unless told otherwise
        section_opponent = section.env_kwargs.pop("opponent")
        opponent = opponent or section_opponent
    if opponent is not None and opponent != "self":
        section.env_kwargs["opponent"] = opponent
    return section, opponent


def _resumed_buffer(resume: Path, source_dir: Path, source: dict[str, Any]) -> Path | None:
    """The replay buffer a resumed run continues with: its source's, when that saved one with the
    model resumed from (a checkpoint's buffer is not kept)."""
    if not (source.get("save_replay_buffer") and resume.stem.startswith((FINAL_MODEL, INTERRUPTED_MODEL))):
        return None
    buffer = source_dir / REPLAY_BUFFER
    if not buffer.is_file():
        print(f"note: {source_dir} asked for its replay buffer but none was saved: it starts empty")
        return None
    return buffer


def _run_config(setup: RunSetup, opponent: str | None) -> dict[str, Any]:
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
        "opponent": opponent,
        "hyperparams": setup.section.as_zoo_section(),
    }


def check_opponent(env_id: str, opponent: str) -> None:
    """``--opponent``: one of the env's built-in players, or self; an env without an opponent takes none."""
    players = reference_for(env_id).players
    if not players:
        what = "replace" if opponent == "self" else "choose"
        raise UsageError(f"--opponent {'self' if opponent == 'self' else repr(opponent)}: {env_id} has no opponent to {what}")
    if opponent not in (*players, "self"):
        raise UsageError(f"unknown opponent {opponent!r} for {env_id}; valid: {', '.join(players)}, self")


def _check_players(section: Section, opponent: str | None, vec_env: str) -> SelfPlay | None:
    """The opponent the run trains against (a built-in player, or self), and self-play's settings."""
    if opponent is None:
        return None
    check_opponent(section.env_id, opponent)
    return _check_self_play(section, vec_env) if opponent == "self" else None


def _check_self_play(section: Section, vec_env: str) -> SelfPlay:
    """Self-play needs the opponent in this process (the native vector env)."""
    if vec_env != "native":
        raise UsageError(f"--opponent self plays in the trainer's process: use --vec-env native, not {vec_env}")
    settings = SelfPlay.from_config(section.self_play)
    check_scripted(settings, section.env_id)
    return settings


#: The name in ``self_play``'s ``scripted`` list of the game's search exploiter (a main exploiter
#: in AlphaStar's terms: it plays the learner alone, planning against its current network).
EXPLOITER = "exploiter"


def check_scripted(settings: SelfPlay, env_id: str) -> None:
    """``self_play``'s scripted players: built-in players of the game, its search exploiter, or
    frozen models of the game (a model file or a run folder: PSRO's best responses in the pool)."""
    players = reference_for(env_id).players
    if not settings.scripted_players:
        raise UsageError(f"self_play scripted={settings.scripted!r}: name at least one player")
    for name in settings.scripted_players:
        if name in (*players, EXPLOITER):
            continue
        if not Path(name).exists():
            raise UsageError(
                f"self_play scripted={settings.scripted!r}: {name!r} is none of the built-in players of {env_id} "
                f"({', '.join(players)}), {EXPLOITER} (the game's search exploiter, planning against the learner), "
                "a model file or a run folder"
            )
        model, run_dir = find_model(name, (FINAL_MODEL, BEST_MODEL, INTERRUPTED_MODEL))
        model_env = read_config(run_dir).get("env_id")
        if not isinstance(model_env, str) or model_env not in ENV_IDS or reference_for(model_env).arena is None:
            raise UsageError(f"self_play scripted: {str(model)!r} is a model of {model_env!r}, which has no opponent to play")


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
