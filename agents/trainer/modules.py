"""Our own agents as ``python -m agents.train`` drives them: any algorithm module that is an
:class:`agents.session.contract.AlgorithmModule` (DQN, PQN, distill, kickstart, one registered in
:mod:`agents.common.configuration.registry`) behind one :class:`agents.trainer.training.Learner`."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import torch
from stable_baselines3.common.logger import Logger

from agents.algorithms.networks import QNetwork
from agents.algorithms.policy import QNetworkPolicy
from agents.algorithms.registered import algorithm_module
from agents.artifacts.models import SNAPSHOTS, section_of, spaces_of
from agents.artifacts.runs import CHECKPOINTS, checkpoints, read_config
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import QConfig
from agents.common.configuration.registry import Algorithm
from agents.common.errors import UsageError, note
from agents.environments.steps import VecEnvSteps, make_steps
from agents.session.checkpoint import SUFFIX as CHECKPOINT_SUFFIX
from agents.session.checkpoint import AlgorithmAgent, load_checkpoint, restore_agent, save_checkpoint, tensors_as_arrays
from agents.session.contract import AlgorithmModule
from agents.session.hooks import RunHooks
from agents.session.milestones import Milestones
from agents.session.progress import Progress
from agents.trainer.setup import RunSetup, make_train_env

if TYPE_CHECKING:
    from agents.twoplayer.selfplay import SnapshotPool


@dataclass(frozen=True)
class ModuleRunChecked:
    """What :meth:`ModuleLearner.check` built and :meth:`ModuleLearner.start` builds on (through
    :attr:`agents.trainer.setup.RunSetup.checked`): the agent's config, its network spec
    and the checkpoint a resumed run continues from."""

    config: QConfig
    spec: dict[str, Any]
    checkpoint: dict[str, Any] | None


class ModuleLearner:
    """The algorithm's agent, its envs, replay buffer and counters; its loop feeds the milestones
    through :class:`agents.session.hooks.RunHooks`."""

    def __init__(self, algo: Algorithm, amp: bool = False, compile: bool = False) -> None:
        self.algorithm: AlgorithmModule = algorithm_module(algo.implementation(), algo.name)
        self.agent_kwargs = {"amp": amp, "compile": compile}
        self.pool: SnapshotPool | None = None

    def check(
        self, section: Section, observation_space: Any, action_space: Any, resume: Path | None, device: str
    ) -> ModuleRunChecked:
        config, spec = self.algorithm.settings(section, observation_space, action_space)
        checkpoint = load_checkpoint(resume, device) if resume else None
        if checkpoint is not None and checkpoint["spec"] != spec:
            raise UsageError(
                f"--resume {str(resume)!r}: its network {checkpoint['spec']} does not match this env and config ({spec})"
            )
        if checkpoint is not None:
            self.check_restores(checkpoint, config, device, resume)
        return ModuleRunChecked(config, spec, checkpoint)

    def check_restores(self, checkpoint: dict[str, Any], config: QConfig, device: str, resume: Path | None) -> None:
        """The checkpoint restored once, before the run folder exists: an agent of this algorithm,
        its weights and optimiser fitting it, its runtime state taken (a tampered one is one line)."""
        what = f"--resume {str(resume)!r}"
        own = self.algorithm.Agent.FORMAT
        if checkpoint["format"] != own:
            raise UsageError(f"{what}: its model is a {checkpoint['format']} checkpoint, not this run's ({own})")
        try:
            agent, _ = restore_agent(checkpoint, config, device)
            run_state = tensors_as_arrays(checkpoint.get("run_state") or {})
            if run_state and "agent" not in run_state:
                raise ValueError("state: lacks agent")
            if "agent" in run_state:
                agent.load_runtime_state(run_state["agent"])
        except (KeyError, ValueError, TypeError, RuntimeError, AttributeError, IndexError, OverflowError) as error:  # data
            first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            raise UsageError(f"{what}: its agent does not fit this run's {own}: {first}") from None

    def start(self, setup: RunSetup[ModuleRunChecked], logger: Logger) -> list[Any]:
        section, run_dir = setup.section, setup.run_dir
        self.config, spec, checkpoint = setup.checked.config, setup.checked.spec, setup.checked.checkpoint
        kwargs: dict[str, Any] = {"seed": setup.seed, **self.agent_kwargs}
        self.agent: AlgorithmAgent
        if checkpoint is not None:
            self.agent, self.progress = restore_agent(checkpoint, self.config, setup.device, **kwargs)
            self.progress.exploration_horizon = self.progress.num_timesteps + setup.timesteps  # see Progress
        else:
            self.agent = self.algorithm.Agent(spec, self.config, setup.device, **kwargs)
            self.progress = Progress(exploration_horizon=setup.timesteps)
        opponent = None
        if setup.self_play is not None:  # only self-play loads the two-player machinery
            from agents.twoplayer.selfplay import make_opponent

            opponent = make_opponent(setup.self_play, section.env_id, section.env_kwargs, section.frame_stack, setup.device)
        self.env = make_train_env(setup, functools.partial(make_steps, stagger=self.algorithm.STAGGER_ENVS), opponent)
        space = self.env.observation_space
        self.buffer = self.algorithm.replay_buffer(self.agent.config, space, setup.device, seed=setup.seed)
        if self.buffer is not None and setup.resume_buffer is not None:
            self.buffer.load(setup.resume_buffer, self.env.num_envs)
        if opponent is not None:
            self.pool = opponent.pool(run_dir / SNAPSHOTS, self.agent.snapshotted, spec, setup.seed)
        if checkpoint is not None:
            inexact = self.restore_run_state(setup, checkpoint.get("run_state"))
            # Told once nothing more can refuse the resume: a refusal is its one line on stderr.
            note(f"resumed from {setup.resume} at step {self.progress.num_timesteps}")
            if setup.resume_buffer is not None and self.buffer is not None:
                note(f"replay buffer restored: {len(self.buffer)} transitions")
            if inexact:
                note(f"resume is not exact: {'; '.join(inexact)}")
        self.logger, self.run_dir = logger, run_dir
        return [self.env]

    def run_state(self) -> dict[str, Any]:
        """Everything besides the weights that the run goes on from: the games in progress, every
        generator (the agent's, the replay buffer's, the pool's, torch's), the pool's choices."""
        return {
            "agent": self.agent.runtime_state(),
            "envs": self.env.get_state(),
            "buffer": None if self.buffer is None else self.buffer.sampler_state(),
            "pool": None if self.pool is None else self.pool.get_state(),
            "torch": torch.get_rng_state(),
        }

    def restore_run_state(self, setup: RunSetup, saved: dict[str, Any] | None) -> list[str]:
        """Go on from the checkpoint's run state; what keeps the resume from being exact (the run
        then goes on from fresh games where it must)."""
        restorable = not isinstance(self.env, VecEnvSteps)  # games in other processes are not saved
        inexact = [] if self.agent.INEXACT_RESUME is None else [self.agent.INEXACT_RESUME]
        if saved is None:
            inexact.append("its checkpoint holds no games in progress (written by an earlier version)")
            saved = {}
        elif not restorable:
            inexact.append(
                f"its games ran in stable-baselines3's vector envs (--vec-env {setup.vec_env}; also a frame stack of 1 "
                "or over a Dict observation, and channels-last frames without one), whose games in progress are not saved"
            )
        elif saved.get("envs") is None:
            inexact.append(f"{setup.section.env_id}'s game cannot save its games in progress (ballenvs.game.Game.get_state)")
        if self.buffer is not None and setup.resume_buffer is None:
            inexact.append("no replay buffer was saved, it starts empty (--save-replay-buffer keeps it)")
        try:
            saved = tensors_as_arrays(saved)
            if "agent" in saved:
                self.agent.load_runtime_state(saved["agent"])
            if saved.get("envs") is not None and restorable:
                self.env.set_state(saved["envs"])
            if self.buffer is not None and setup.resume_buffer is not None and saved.get("buffer") is not None:
                self.buffer.set_sampler_state(saved["buffer"])
            if self.pool is not None and saved.get("pool") is not None:
                self.pool.set_state(saved["pool"])
            if "torch" in saved:
                torch.set_rng_state(saved["torch"])
            # A rollout cut short (PQN's, our PPO's), taken now: its shape checked against the run's envs
            # here, not at the first update.
            rollout_for, steps = getattr(self.agent, "rollout_for", None), getattr(self.config, "rollout_steps", None)
            if rollout_for is not None and steps is not None:
                rollout_for(steps, self.env.num_envs, self.env.observation_space)
        except (ValueError, TypeError, RuntimeError, IndexError, KeyError, OverflowError) as error:  # data, not a bug
            raise UsageError(f"--resume {str(setup.resume)!r}: its run state does not fit this run: {error}") from None
        return inexact

    @property
    def learning_starts(self) -> int:
        return getattr(self.config, "learning_starts", 0)  # PQN has none; DQN's and distill's are their configs'

    @property
    def num_timesteps(self) -> int:
        return self.progress.num_timesteps

    def learn(self, timesteps: int, milestones: Milestones) -> None:
        milestones.start(self.progress.num_timesteps, self.pool)
        hooks = RunHooks(milestones, self.logger, self.agent)
        self.algorithm.learn(self.agent, self.env, self.progress, timesteps, hooks, self.buffer)

    def policy(self) -> QNetworkPolicy:
        self.check_finite()
        played = self.agent.played
        assert isinstance(played, QNetwork)  # every network our agents play is one (AlgorithmAgent)
        return QNetworkPolicy(played, 0.0, str(self.agent.device))

    def check_finite(self) -> None:
        """Before every evaluation and every model saved (never in the step loop, which would wait on
        the device): a network gone NaN or infinite stops the run in one line, its last finite
        model kept, rather than training and saving NaN to its end."""
        networks = {"the played network": self.agent.played, "the online network": self.agent.online}
        for name, network in networks.items():
            if all(bool(torch.isfinite(weight).all()) for weight in network.state_dict().values()):
                continue
            saved = checkpoints(self.run_dir / CHECKPOINTS, CHECKPOINT_SUFFIX)  # fewest steps first
            kept = f"the last finite model is {saved[-1][1]}" if saved else "no model was saved before it"
            raise UsageError(
                f"{name} turned NaN or infinite by step {self.progress.num_timesteps} (a loss that diverged: a lower "
                f"learning_rate or max_grad_norm); {kept}"
            )

    def save(self, path: Path) -> None:
        self.check_finite()
        save_checkpoint(path, self.agent, self.progress, self.run_state())

    def save_replay_buffer(self, path: Path) -> None:
        self.buffer.save(path)

    def save_zoo_model(self, path: Path) -> None:
        if self.agent.spec.get("layer_norm"):  # a network SB3 has not: the zoo folder holds no model
            return
        # SB3's DQN is built for this copy alone, at the run's end: its module stays off the way to an update.
        from agents.sb3.sb3_dqn import from_q_network, save_model

        config = read_config(self.run_dir)
        save_model(from_q_network(section_of(config), spaces_of(config), self.agent.played.state_dict()), path)
