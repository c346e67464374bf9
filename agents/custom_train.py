"""Train our own agents (agents/custom/) on a ballenvs environment: our DQN (--algo custom), PQN (--algo pqn).

    python -m agents.custom_train                                # our DQN on BallDuel-v0, zoo_configs/dqn.yml
    python -m agents.custom_train --env UAVGrid-v0 --timesteps 200000 --n-envs 4
    python -m agents.custom_train --algo pqn --env UAVGrid-v0     # PQN, zoo_configs/pqn.yml

Any algorithm registered with this trainer (agents.common.algorithms) is an --algo choice.

The same flags, config file and run-folder layout as agents.sb3_train, so the two compare
at equal settings; checkpoints are weights-only .pt files.
"""

from __future__ import annotations

import argparse
import functools
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from stable_baselines3.common.logger import Logger, configure

from agents.common.algorithms import CUSTOM_TRAINER, Algorithm, check_algo, trained_by
from agents.common.cli import describe_device, run_cli, trainer_parser
from agents.common.config import Section
from agents.common.console import Console
from agents.common.errors import UsageError
from agents.common.evaluation import Evaluator
from agents.common.hyperparameters import DQNConfig, QConfig
from agents.common.models import SNAPSHOTS, resume_model
from agents.common.runs import BEST_MODEL, CHECKPOINTS, FINAL_MODEL, REPLAY_BUFFER, checkpoint_name, next_multiple, read_config
from agents.common.tracking import Tracker, log_hyperparameters
from agents.common.training import (
    EVAL_SEED_OFFSET,
    RunSetup,
    make_eval_envs,
    make_train_env,
    prepare_run,
    run_training,
    section_of,
    spaces_of,
    starting,
)
from agents.common.zoo import write_zoo_files
from agents.custom import dqn, pqn
from agents.custom.checkpoint import SUFFIX, CustomPolicy, load_checkpoint, restore_agent, save_checkpoint
from agents.custom.core import CustomAlgorithm, Hooks, Progress, QLearner, custom_algorithm, make_steps
from agents.sb3.dqn import from_q_network, save_model
from agents.twoplayer.selfplay import SnapshotPool, make_opponent

DEFAULT_ALGO = "custom"

#: The shipped algorithms of our own: the type checker holds each module to the contract.
SHIPPED: tuple[CustomAlgorithm, ...] = (dqn, pqn)


@dataclass(frozen=True)
class AgentPlan:
    """What the checks before the run folder built for the agent: its algorithm's module (held to
    the contract), its config and network spec, and the checkpoint it resumes from (None for a new
    agent)."""

    algorithm: CustomAlgorithm
    config: QConfig
    spec: dict[str, Any]
    state: dict[str, Any] | None


def checker(algo: Algorithm) -> Callable[..., AgentPlan]:
    def check_section(
        section: Section, observation_space: Any, action_space: Any, resume: Path | None, device: str
    ) -> AgentPlan:
        """Build what the agent needs from the section, failing before a run folder exists."""
        algorithm = custom_algorithm(algo.implementation(), algo.name)
        config, spec = algorithm.settings(section, observation_space, action_space)
        state = load_checkpoint(resume, device) if resume else None
        if state is not None and state["spec"] != spec:
            raise UsageError(
                f"--resume {str(resume)!r}: its network {state['spec']} does not match this env and config ({spec})"
            )
        return AgentPlan(algorithm, config, spec, state)

    return check_section


class RunHooks(Hooks):
    """Checkpoints every save_freq steps, an evaluation every eval_freq steps, progress on the
    console, and the rollout figures in the logger every few episodes."""

    def __init__(
        self, agent: QLearner, setup: RunSetup, args: Any, logger: Logger, console: Console, progress: Progress
    ) -> None:
        self.agent, self.setup, self.logger, self.console = agent, setup, logger, console
        self.save_freq, self.eval_freq, self.progress = args.save_freq, args.eval_freq, progress
        self.evaluator = None
        self.pool: SnapshotPool | None = None  # self-play's snapshots and opponent
        if args.eval_freq:
            run_dir = setup.run_dir
            self.evaluator = Evaluator(
                make_eval_envs(setup, args.eval_episodes),
                args.eval_episodes,
                setup.seed + EVAL_SEED_OFFSET,
                run_dir,
                logger,
                console,
                save_best=lambda: save_checkpoint(run_dir / f"{BEST_MODEL}{SUFFIX}", agent, self.progress),
            )
        self._next_save = next_multiple(progress.num_timesteps, self.save_freq)
        self._next_eval = next_multiple(progress.num_timesteps, self.eval_freq)
        self.start_time = time.time()

    def on_step(self, progress: Progress) -> bool:
        steps = progress.num_timesteps
        self.console.update(steps)
        if self.pool is not None:
            self.pool.on_step(steps)
        if steps >= self._next_save:
            folder = self.setup.run_dir / CHECKPOINTS
            folder.mkdir(exist_ok=True)
            save_checkpoint(folder / checkpoint_name(steps, SUFFIX), self.agent, progress)
            self._next_save = next_multiple(steps, self.save_freq)
        if steps >= self._next_eval and self.evaluator is not None:
            self.evaluator(CustomPolicy(self.agent.q, 0.0, str(self.agent.device)), steps)
            self.agent.q.train()
            self.logger.record("rollout/exploration_rate", progress.epsilon(self.agent.config))
            self.logger.dump(steps)
            self._next_eval = next_multiple(steps, self.eval_freq)
        return True

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
        if self.evaluator is not None:
            self.evaluator.close()
        self.logger.close()


def prepare(argv: list[str] | None, make_folder: bool = True) -> tuple[argparse.Namespace, RunSetup]:
    """Parse and check a command line (and make the run folder): what main() does before training."""
    parser = trainer_parser("python -m agents.custom_train", __doc__.split("\n\n")[0].strip(), trained_by(CUSTOM_TRAINER))
    parser.set_defaults(algo=None)  # the resumed run's, else DEFAULT_ALGO
    parser.add_argument("--amp", action="store_true", help="bf16 autocast on CUDA (not applied on CPU)")
    parser.add_argument("--compile", action="store_true", help="torch.compile the Q-networks on CUDA (not applied on CPU)")
    args = parser.parse_args(argv)
    if args.algo is None:  # the resumed run's (another trainer's run is refused by prepare_run)
        resumed = resume_model(args.resume)[2]["algo"] if args.resume else None
        args.algo = resumed if resumed in trained_by(CUSTOM_TRAINER) else DEFAULT_ALGO
    algo = check_algo(args.algo, CUSTOM_TRAINER)
    if not algo.replay_buffer and args.save_replay_buffer:
        raise UsageError(f"--save-replay-buffer: {algo.label} keeps no replay buffer")
    return args, prepare_run(args, algo, checker(algo), make_folder)


def zoo_model_writer(setup: RunSetup, agent: QLearner) -> Callable[[Path], None] | None:
    """Writes the agent's Q-network as an SB3 DQN .zip; None for a network SB3 has not (LayerNorm)."""
    if agent.spec.get("layer_norm"):
        return None

    def write(path: Path) -> None:
        config = read_config(setup.run_dir)
        model = from_q_network(section_of(config), spaces_of(config), agent.q.state_dict())
        save_model(model, path)

    return write


def main(argv: list[str] | None = None) -> Path:
    args, setup = prepare(argv)
    plan, section, run_dir = setup.checked, setup.section, setup.run_dir
    assert isinstance(plan, AgentPlan)  # what this trainer's check returned
    algorithm = plan.algorithm
    print(f"device: {describe_device(setup.device)}")
    for flag in ("amp", "compile"):
        if getattr(args, flag) and setup.device != "cuda":
            print(f"--{flag}: not applied on CPU (it only pays off on a GPU)")
    print(f"{section.env_id}: {section.policy}, {section.n_envs} envs ({setup.vec_env}), {setup.timesteps} steps -> {run_dir}")

    with starting(setup):  # Ctrl-C before the first step leaves no run folder behind
        tracker = Tracker(args, run_dir)  # before TensorBoard's writer: W&B mirrors it
        agent_kwargs = {"seed": setup.seed, "amp": args.amp, "compile": args.compile}
        if plan.state is not None:
            agent, progress = restore_agent(plan.state, plan.config, setup.device, **agent_kwargs)
            progress.exploration_horizon = progress.num_timesteps + setup.timesteps  # see Progress
            print(f"resumed from {setup.resume} at step {progress.num_timesteps}")
        else:
            agent = algorithm.Agent(plan.spec, plan.config, setup.device, **agent_kwargs)
            progress = Progress(exploration_horizon=setup.timesteps)
        opponent = make_opponent(setup.self_play, section.env_id, section.env_kwargs, section.frame_stack, setup.device)
        train_env = make_train_env(setup, functools.partial(make_steps, stagger=algorithm.STAGGER_ENVS), opponent)
        buffer = algorithm.replay_buffer(agent.config, train_env.observation_space, setup.device, seed=setup.seed)
        if buffer is not None and setup.resume_buffer is not None:
            buffer.load(setup.resume_buffer, train_env.num_envs)
            print(f"replay buffer restored: {len(buffer)} transitions")
        learning_starts = agent.config.learning_starts if isinstance(agent.config, DQNConfig) else 0  # PQN has none

        def learn() -> None:
            algorithm.learn(agent, train_env, progress, setup.timesteps, hooks, buffer)

        console = Console(setup.timesteps, progress.num_timesteps, learning_starts, enabled=not args.no_progress)
        hooks = RunHooks(agent, setup, args, configure(str(run_dir), ["csv", "tensorboard"]), console, progress)
        log_hyperparameters(hooks.logger, run_dir)
        if opponent is not None and setup.self_play is not None:  # self-play made the opponent
            hooks.pool = SnapshotPool(setup.self_play, run_dir / SNAPSHOTS, agent.q, opponent, agent.spec, setup.seed)
            hooks.pool.start(progress.num_timesteps)

    def save(name: str) -> Path:
        """Replay buffer first, then the model: a model beside no buffer means none was asked for."""
        if setup.save_replay_buffer:
            buffer.save(run_dir / REPLAY_BUFFER)
        save_checkpoint(run_dir / f"{name}{SUFFIX}", agent, progress)
        if name == FINAL_MODEL:  # and the RL Zoo's files, the network as an SB3 DQN where it has one
            write_zoo_files(run_dir, read_config(run_dir), zoo_model_writer(setup, agent))
        return run_dir / f"{name}{SUFFIX}"

    return tracker.around(
        lambda: run_training(setup, learn, save, lambda: progress.num_timesteps, console, [train_env, hooks])
    )


if __name__ == "__main__":
    sys.exit(run_cli(main))
