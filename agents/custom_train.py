"""Train our own DQN (agents/custom/dqn.py) on a ballenvs environment.

    python -m agents.custom_train                                # BallDuel-v0, zoo_configs defaults
    python -m agents.custom_train --env UAVGrid-v0 --timesteps 200000 --n-envs 4

The same flags, config file and run-folder layout as agents.sb3_train, so the two compare
at equal settings; checkpoints are weights-only .pt files.
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.evaluation import evaluate_policy
from stable_baselines3.common.logger import Logger, configure

from agents.cli import describe_device, run_cli, trainer_parser
from agents.config import Section, eval_kwargs
from agents.custom.checkpoint import SUFFIX, CustomPolicy, load_checkpoint, restore_agent, save_checkpoint
from agents.custom.collect import make_steps
from agents.custom.dqn import SUPPORTED_KEYS, DQNAgent, DQNConfig, Hooks, Progress, config_from, replay_buffer, train
from agents.custom.networks import network_spec
from agents.runs import BEST_MODEL, CHECKPOINTS, FINAL_MODEL, atomic_path
from agents.training import RunSetup, finish_run, make_eval_env, make_train_env, prepare_run

ALGO = "custom"
REPLAY_BUFFER = "replay_buffer.npz"


def agent_settings(section: Section, observation_space: Any, action_space: Any) -> tuple[DQNConfig, dict[str, Any]]:
    """The agent's hyperparameters and network spec from a config section and the spaces it will see."""
    policy_kwargs = eval_kwargs("policy_kwargs", section.algo_kwargs.get("policy_kwargs"))
    return config_from(section.algo_kwargs), network_spec(
        observation_space, int(action_space.n), section.policy, policy_kwargs
    )


def check_section(section: Section, observation_space, action_space, resume: Path | None, device: str) -> dict[str, Any]:
    """Build what the agent needs from the section, failing before a run folder exists."""
    config, spec = agent_settings(section, observation_space, action_space)
    state = load_checkpoint(resume, device) if resume else None
    if state is not None and state["spec"] != spec:
        raise ValueError(f"--resume {str(resume)!r}: its network {state['spec']} does not match this env and config ({spec})")
    return {"config": config, "spec": spec, "state": state}


class RunHooks(Hooks):
    """Checkpoints every save_freq steps, evaluation every eval_freq steps, logs every few episodes."""

    def __init__(self, agent: DQNAgent, setup: RunSetup, args: Any, logger: Logger, progress: Progress) -> None:
        self.agent, self.setup, self.logger = agent, setup, logger
        self.save_freq, self.eval_freq, self.eval_episodes = args.save_freq, args.eval_freq, args.eval_episodes
        self.eval_env = make_eval_env(setup) if args.eval_freq else None
        self.best_mean = -np.inf
        self.evaluations: dict[str, list] = {"timesteps": [], "results": [], "ep_lengths": []}
        # A resumed run saves and evaluates at the next multiples of the frequencies.
        self._next_save = self._next_multiple(progress.num_timesteps, self.save_freq)
        self._next_eval = self._next_multiple(progress.num_timesteps, self.eval_freq)
        self.start_time = time.time()

    @staticmethod
    def _next_multiple(steps: int, every: int) -> float:
        return (steps // every + 1) * every if every else np.inf

    def on_step(self, progress: Progress) -> bool:
        if progress.num_timesteps >= self._next_save:
            folder = self.setup.run_dir / CHECKPOINTS
            folder.mkdir(exist_ok=True)
            save_checkpoint(folder / f"model_{progress.num_timesteps}_steps{SUFFIX}", self.agent, progress)
            self._next_save = self._next_multiple(progress.num_timesteps, self.save_freq)
        if progress.num_timesteps >= self._next_eval:
            self.evaluate(progress)
            self._next_eval = self._next_multiple(progress.num_timesteps, self.eval_freq)
        return True

    def evaluate(self, progress: Progress) -> None:
        """As stable-baselines3's EvalCallback: deterministic episodes, best model kept, evaluations.npz."""
        policy = CustomPolicy(self.agent.q, 0.0, str(self.agent.device))
        returns, lengths = evaluate_policy(
            policy, self.eval_env, self.eval_episodes, deterministic=True, return_episode_rewards=True
        )
        self.agent.q.train()
        self.evaluations["timesteps"].append(progress.num_timesteps)
        self.evaluations["results"].append(returns)
        self.evaluations["ep_lengths"].append(lengths)
        folder = self.setup.run_dir / "eval"
        folder.mkdir(exist_ok=True)
        with atomic_path(folder / "evaluations.npz") as tmp:
            with open(tmp, "wb") as file:
                np.savez(file, **{k: np.array(v) for k, v in self.evaluations.items()})
        mean = float(np.mean(returns))
        self.logger.record("eval/mean_reward", mean)
        self.logger.record("eval/mean_ep_length", float(np.mean(lengths)))
        self.logger.record("rollout/exploration_rate", progress.epsilon(self.agent.config))
        self.logger.record("time/total_timesteps", progress.num_timesteps)
        self.logger.record("time/time_elapsed", int(time.time() - self.start_time))
        self.logger.dump(progress.num_timesteps)
        if mean > self.best_mean:
            self.best_mean = mean
            save_checkpoint(self.setup.run_dir / f"{BEST_MODEL}{SUFFIX}", self.agent, progress)

    def on_episodes(self, progress, returns, lengths, loss, fps) -> None:
        # The same keys as stable-baselines3's DQN, so one tool reads both progress.csv files.
        record = self.logger.record
        record("rollout/ep_rew_mean", float(np.mean(returns)))
        record("rollout/ep_len_mean", float(np.mean(lengths)))
        record("rollout/exploration_rate", progress.epsilon(self.agent.config))
        record("time/episodes", progress.episodes)
        record("time/fps", int(fps))
        record("time/time_elapsed", int(time.time() - self.start_time))
        record("time/total_timesteps", progress.num_timesteps)
        record("train/learning_rate", self.agent.optimizer.param_groups[0]["lr"])
        record("train/n_updates", self.agent.n_updates)
        if loss is not None:
            record("train/loss", float(loss))  # the one device sync, every few episodes
        self.logger.dump(progress.num_timesteps)

    def close(self) -> None:
        if self.eval_env is not None:
            self.eval_env.close()
        self.logger.close()


def main(argv: list[str] | None = None) -> Path:
    parser = trainer_parser("python -m agents.custom_train", __doc__.split("\n\n")[0].strip())
    parser.add_argument("--amp", action="store_true", help="bf16 autocast on CUDA (not applied on CPU)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the Q-networks on CUDA (not applied on CPU)")
    args = parser.parse_args(argv)
    setup = prepare_run(args, ALGO, SUPPORTED_KEYS, "agents.custom_train", SUFFIX, check=check_section)
    checked, section, run_dir = setup.checked, setup.section, setup.run_dir
    print(f"device: {describe_device(setup.device)}")
    for flag in ("amp", "compile"):
        if getattr(args, flag) and setup.device != "cuda":
            print(f"--{flag}: not applied on CPU (it only pays off on a GPU)")
    print(f"{section.env_id}: {section.policy}, {section.n_envs} envs ({setup.vec_env}), {setup.timesteps} steps -> {run_dir}")

    agent_kwargs = {"seed": setup.seed, "amp": args.amp, "compile": args.compile}
    if checked["state"] is not None:
        agent, progress = restore_agent(checked["state"], setup.device, **agent_kwargs)
        print(f"resumed from {setup.resume} at step {progress.num_timesteps}")
    else:
        agent = DQNAgent(checked["spec"], checked["config"], setup.device, **agent_kwargs)
        progress = Progress(exploration_horizon=setup.timesteps)
    train_env = make_train_env(setup, make_steps)
    buffer = replay_buffer(agent.config, train_env.observation_space, setup.device, seed=setup.seed)
    if setup.resume is not None and (setup.resume.parent / REPLAY_BUFFER).exists():
        buffer.load(setup.resume.parent / REPLAY_BUFFER)
        print(f"replay buffer restored: {len(buffer)} transitions")
    hooks = RunHooks(agent, setup, args, configure(str(run_dir), ["csv", "tensorboard"]), progress)
    start_steps = progress.num_timesteps
    bar = None if args.no_progress else _progress_bar(setup.timesteps)
    try:
        elapsed = train(agent, train_env, buffer, progress, setup.timesteps, hooks, on_progress=bar.update if bar else None)
    finally:
        if bar is not None:
            bar.close()
        train_env.close()
        hooks.close()
    save_checkpoint(run_dir / f"{FINAL_MODEL}{SUFFIX}", agent, progress)
    if args.save_replay_buffer:
        with atomic_path(run_dir / REPLAY_BUFFER) as tmp:
            buffer.save(tmp)
    finish_run(run_dir, progress.num_timesteps - start_steps, elapsed, progress.num_timesteps)
    return run_dir


def _progress_bar(total: int) -> Any:
    from tqdm.rich import tqdm

    warnings.filterwarnings("ignore", message="rich is experimental")  # tqdm's notice about its rich bar
    return tqdm(total=total, unit="steps")


if __name__ == "__main__":
    sys.exit(run_cli(main))
