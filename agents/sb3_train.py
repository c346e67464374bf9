"""Train stable-baselines3 DQN on a ballenvs environment.

    python -m agents.sb3_train                                   # BallDuel-v0, zoo_configs defaults
    python -m agents.sb3_train --env UAVGrid-v0 --timesteps 200000 --n-envs 4

CNN policies for image observations, MultiInputPolicy for UAVGrid's dict observation (as the
config says), on the GPU when there is one, with SubprocVecEnv workers when --n-envs > 1.
"""

from __future__ import annotations

import inspect
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from gymnasium import spaces
from stable_baselines3 import DQN
from stable_baselines3.common.callbacks import EvalCallback
from stable_baselines3.common.logger import configure

from agents.callbacks import AtomicCheckpoint, SaveBest
from agents.cli import describe_device, run_cli, trainer_parser
from agents.config import LinearSchedule, eval_kwargs, schedule
from agents.evaluate import load_model
from agents.runs import CHECKPOINTS, FINAL_MODEL, atomic_path
from agents.sb3_buffers import DictNStepReplayBuffer
from agents.training import finish_run, make_eval_env, make_train_env, prepare_run

ALGO = "dqn"
#: DQN's own hyperparameters; the run settings (env, seed, device, ...) come from flags.
DQN_KEYS = tuple(
    name
    for name in inspect.signature(DQN.__init__).parameters
    # replay_buffer_class would need a class import from the YAML; the zoo's other keys are flags here.
    if name
    not in (
        "self",
        "policy",
        "env",
        "tensorboard_log",
        "verbose",
        "seed",
        "device",
        "_init_setup_model",
        "replay_buffer_class",
    )
)
REPLAY_BUFFER = "replay_buffer.pkl"


def dqn_kwargs(algo_kwargs: dict[str, Any], observation_space: spaces.Space) -> dict[str, Any]:
    """DQN's keyword arguments from a section's algorithm keys, built as the zoo builds them:
    policy and replay buffer kwargs evaluated, ``lin_<x>`` learning rates made schedules, and
    ``n_steps`` on Dict observations handed to our DictNStepReplayBuffer (SB3's DQN refuses it)."""
    kwargs = dict(algo_kwargs)
    for key in ("policy_kwargs", "replay_buffer_kwargs"):
        if key in kwargs:
            kwargs[key] = eval_kwargs(key, kwargs[key])
    if "learning_rate" in kwargs:
        initial, linear = schedule(kwargs["learning_rate"])
        kwargs["learning_rate"] = LinearSchedule(initial) if linear else initial
    n_steps = kwargs.get("n_steps", 1)
    if n_steps > 1 and isinstance(observation_space, spaces.Dict):
        kwargs["n_steps"] = 1
        kwargs["replay_buffer_class"] = DictNStepReplayBuffer
        kwargs["replay_buffer_kwargs"] = {
            **kwargs.get("replay_buffer_kwargs", {}),
            "n_steps": n_steps,
            "gamma": kwargs.get("gamma", 0.99),
        }
    return kwargs


def load_resumed(section, observation_space, action_space, resume, device) -> DQN | None:
    """The model to resume from, loaded before the run folder exists so a bad file fails early."""
    if resume is None:
        return None
    return load_model(ALGO, resume, device)


def main(argv: list[str] | None = None) -> Path:
    parser = trainer_parser("python -m agents.sb3_train", __doc__.split("\n\n")[0].strip())
    args = parser.parse_args(argv)
    setup = prepare_run(args, ALGO, DQN_KEYS, "agents.sb3_train", ".zip", check=load_resumed)
    section, run_dir = setup.section, setup.run_dir
    print(f"device: {describe_device(setup.device)}")
    print(f"{section.env_id}: {section.policy}, {section.n_envs} envs ({setup.vec_env}), {setup.timesteps} steps -> {run_dir}")

    train_env = make_train_env(setup)
    if setup.resume:
        model = setup.checked
        model.set_env(train_env)
        buffer = setup.resume.parent / REPLAY_BUFFER
        if buffer.exists():
            model.load_replay_buffer(buffer)
        print(
            f"resumed from {setup.resume} at step {model.num_timesteps}"
            + (" with its replay buffer" if buffer.exists() else "")
        )
    else:
        model = DQN(
            section.policy,
            train_env,
            seed=setup.seed,
            device=setup.device,
            **dqn_kwargs(section.algo_kwargs, train_env.observation_space),
        )
    model.set_logger(configure(str(run_dir), ["csv", "tensorboard"]))

    # Evaluation runs in-process on purpose (DummyVecEnv beside SubprocVecEnv training).
    warnings.filterwarnings("ignore", "Training and eval env are not of the same type")
    callbacks = []
    if args.save_freq:
        callbacks.append(AtomicCheckpoint(args.save_freq, run_dir / CHECKPOINTS))
    if args.eval_freq:
        callbacks.append(
            EvalCallback(
                make_eval_env(setup),
                n_eval_episodes=args.eval_episodes,
                eval_freq=max(args.eval_freq // section.n_envs, 1),
                log_path=str(run_dir / "eval"),
                callback_on_new_best=SaveBest(run_dir),
                deterministic=True,
                verbose=0,
            )
        )
    start_steps, start = model.num_timesteps, time.perf_counter()
    try:
        model.learn(
            setup.timesteps, callback=callbacks, progress_bar=not args.no_progress, reset_num_timesteps=setup.resume is None
        )
    finally:
        train_env.close()
        model.logger.close()
    elapsed = time.perf_counter() - start
    with atomic_path(run_dir / f"{FINAL_MODEL}.zip") as tmp:
        model.save(tmp)
    if args.save_replay_buffer:
        with atomic_path(run_dir / REPLAY_BUFFER) as tmp:
            model.save_replay_buffer(tmp)
    finish_run(run_dir, model.num_timesteps - start_steps, elapsed, model.num_timesteps)
    return run_dir


if __name__ == "__main__":
    sys.exit(run_cli(main))
