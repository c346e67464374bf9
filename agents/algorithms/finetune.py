"""Our DQN fine-tuned from a model that already plays, without unlearning what it knows.

Temporal-difference learning started on a network that holds a policy rewrites its values before
it improves on them, and the policy falls apart on the way: "unlearning" in offline-to-online
fine-tuning (Cal-QL, Nakamoto et al. 2023; WSRL, Zhou et al. 2024), and what kickstarted self-play
did here once its teacher's term ended (benchmarks/RESULTS.md). Three things keep it, a fourth may:

1. **Calibration first** (``calibration_steps``): the start plays, its greedy actions held, while
   the Q-network's values are fitted to the start's own returns under this run's rewards: the TD
   targets bootstrap on the start's action at the next state (the values of its policy, SARSA's
   targets), not on the max. No update can change a played action yet. The greedy policy of
   values so fitted is a policy improvement step over the start's.
2. **A pull to the start** (``pull_weight``): the cross-entropy of softmax(Q / pull_temperature)
   to the start's policy, softmax(start / pull_temperature), on each minibatch's states, beside
   the TD loss (AlphaStar's KL to its supervised policy).
3. **Released on evidence, not on a clock**: the run is evaluated once before its first step (the
   start's own level against each opponent). After calibration, each evaluation that holds that
   level (no opponent's win rate more than ``pull_margin`` below the start's; a game without
   winners: its mean return within that share of the start's) multiplies the pull's weight by
   ``pull_release``; one that falls takes a release back (divides it by ``pull_release``, up to
   ``pull_weight``): falls that go on bring the whole pull back within a few evaluations, while
   one unlucky evaluation (100 games carry about 4 points of noise) costs one step. A run without
   evaluations (``--eval-freq 0``) has no evidence, and its pull stays. The opponents are the
   built-ins and whoever ``self_play``'s ``evaluated`` names: the start itself (its model file)
   and the planner there make a fall against them bring the pull back too.
4. **Or a pull that moves on with the evidence** (``pull_to_latest_held``): its target is the
   latest played network whose evaluation held the start's level (the start's until one does), so
   a learner that has gone past its start is drawn back to the last policy known to hold, not to
   the start; the start's level stays the bar.
5. **A guide's roll-in** (``roll_in_steps``; JSRL, Uchendu et al. 2022): the start plays the first
   steps of every game and the learner the rest, so the learner's own choices are first tried
   where the game is nearly decided; the roll-in shortens on the pull's evidence (by
   ``roll_in_release`` at each evaluation that holds, back at each that falls), until the learner
   plays whole games. The evaluations play the learner alone: the bar is the start's level.

The start (``start_from``; a distilled student's logits scaled to values), the evidence and the
pull's resume state are :mod:`agents.algorithms.warm_start`'s. Everything else is
:mod:`agents.algorithms.dqn`'s: its buffer, targets, loop.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F

from agents.algorithms import dqn
from agents.algorithms.dqn import STAGGER_ENVS, replay_buffer
from agents.algorithms.networks import QNetwork, settings_of
from agents.algorithms.warm_start import (
    check_start,
    evidence_from_the_start,
    holds,
    load_start,
    saved_amount,
    saved_level,
    weighed,
)
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import OurDQNConfig, StartedFrom, key
from agents.common.errors import UsageError
from agents.common.tensors import to_tensor
from agents.session.contract import AlgorithmModule
from agents.session.evaluation import Evaluation
from agents.session.hooks import Hooks
from agents.session.progress import Progress
from ballenvs.state import parts

if TYPE_CHECKING:
    from agents.algorithms.buffer import Batch

__all__ = ["STAGGER_ENVS", "Agent", "learn", "replay_buffer", "settings"]


@dataclass
class FinetuneConfig(StartedFrom, OurDQNConfig):
    """Our DQN fine-tuned from a model that plays (zoo_configs/finetune.yml): calibration on the
    start's own games, then a pull to the start released as evaluations hold its level."""

    pull_to_latest_held: bool = key(
        False, "the pull's target is the latest played network whose evaluation held the start's level, not the start"
    )
    roll_in_steps: int = key(
        0,
        "the start plays the first this many steps of every game (a guide's roll-in), shortened by roll_in_release "
        "at each evaluation that holds the start's level, lengthened back at each that falls",
        low=0,
    )
    roll_in_release: float = key(
        0.5,
        "the roll-in is multiplied by this at each evaluation that holds, divided by it at each that falls",
        low=0,
        high=1,
        low_open=True,
    )


def settings(section: Section, observation_space: Any, action_space: Any) -> tuple[FinetuneConfig, dict[str, Any]]:
    """DQN's config and network, and the start it fine-tunes, fitting this network."""
    config, spec = settings_of(FinetuneConfig, section, observation_space, action_space)
    if not config.start_from:
        raise UsageError(
            f"start_from: name the model file or run folder to fine-tune, e.g. --hyperparams "
            f"start_from=runs/distill/{section.env_id}_1"
        )
    check_start(config.start_from, spec)
    return config, spec


class FinetuneAgent(dqn.DQNAgent):
    """Our DQN agent started from a model, with that model frozen beside it (the start) and the
    pull towards it."""

    FORMAT = "ballenvs-custom-finetune/1"  # of its checkpoints
    OWN_STATE = ("pull", "start_level", "roll_in", "game_steps")  # its runtime state beside DQN's

    def __init__(self, spec: dict[str, Any], config: FinetuneConfig, device: str, **options: Any) -> None:
        super().__init__(spec, config, device, **options)  # seed, amp, compile: DQN's
        load_start(self.q, config.start_from)
        self.target.load_state_dict(self.q.state_dict())
        if self.averaged is not None:
            self.averaged.load_state_dict(self.q.state_dict())
        self.start = QNetwork(spec).to(self.device).requires_grad_(False).eval()
        self.start.load_state_dict(self.q.state_dict())
        self.pull_target = self.start  # the network the pull draws towards
        if config.pull_to_latest_held:
            self.pull_target = QNetwork(spec).to(self.device).requires_grad_(False).eval()
            self.pull_target.load_state_dict(self.q.state_dict())
        self.pull = config.pull_weight  # the pull's weight, now
        self.start_level: Evaluation | None = None  # the start's evaluation, before the first step
        self.roll_in = float(config.roll_in_steps)  # the steps of every game the start plays, now
        self.game_steps: np.ndarray | None = None  # each env's steps into its game, kept by learn
        self.calibrating = config.calibration_steps > 0  # kept by learn as the steps go by

    def start_actions(self, observations: Any) -> np.ndarray:
        with torch.inference_mode(), self._autocast():
            return self.start(to_tensor(observations, self.device)).argmax(dim=1).cpu().numpy()

    def act(self, observation: Any, epsilon: float) -> np.ndarray:
        if self.calibrating:
            return self.start_actions(observation)
        actions = self.epsilon_greedy(observation, epsilon)
        if self.game_steps is not None and self.roll_in >= 1:
            guided = self.game_steps < round(self.roll_in)
            if guided.any():
                actions = np.where(guided, self.start_actions(observation), actions)
        return actions

    def warm_up_actions(self, observations: Any, n: int) -> np.ndarray:
        return self.start_actions(observations)  # the start's games fill the buffer, not uniform ones

    def next_action_values(self, next_observations: torch.Tensor) -> torch.Tensor | None:
        if self.calibrating:  # the start's policy's values: bootstrap on the start's own action
            return self.start(next_observations).float()
        return super().next_action_values(next_observations)

    def loss(self, batch: Batch) -> torch.Tensor:
        if self.pull == 0:
            return self.td_loss(batch)
        with self._autocast():
            q_values = self._q_fn(batch.observations).float()  # one forward pass for both terms
        temperature = self.config.pull_temperature
        with torch.no_grad(), self._autocast():
            targets = F.softmax(self.pull_target(batch.observations).float() / temperature, dim=1)
        pull = -(targets * F.log_softmax(q_values / temperature, dim=1)).sum(dim=1).mean()
        return self.td_loss(batch, q_values) + self.pull * pull

    def weigh(self, evaluation: Evaluation) -> None:
        """The pull after an evaluation (see the module docstring)."""
        if self.start_level is None:
            return
        config, held = self.config, holds(evaluation, self.start_level, self.config.pull_margin)
        if held and self.calibrating:  # no release while the start plays
            return
        self.pull = weighed(self.pull, held, config.pull_release, config.pull_weight)
        self.roll_in = weighed(self.roll_in, held, config.roll_in_release, config.roll_in_steps)
        if held and config.pull_to_latest_held:  # the played network held: the pull now draws towards it
            self.pull_target.load_state_dict(self.played.state_dict())

    def schedules(self) -> dict[str, float]:
        roll_in = {"train/roll_in_steps": self.roll_in} if self.config.roll_in_steps else {}
        return {"train/pull_weight": self.pull, **roll_in}

    def runtime_state(self) -> dict[str, Any]:
        level = None if self.start_level is None else self.start_level._asdict()
        game_steps = None if self.game_steps is None else self.game_steps.tolist()
        own = {"pull": self.pull, "start_level": level, "roll_in": self.roll_in, "game_steps": game_steps}
        return {**super().runtime_state(), **own}

    def load_runtime_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("pull", "start_level"), "agent")  # a resume without them would start the pull over
        super().load_runtime_state({k: v for k, v in state.items() if k not in self.OWN_STATE})
        config = self.config
        self.pull = saved_amount(state["pull"], config.pull_weight, "pull")
        # A run from before the roll-in existed had none: its whole length, as a new run's.
        self.roll_in = saved_amount(state.get("roll_in", config.roll_in_steps), config.roll_in_steps, "roll_in")
        game_steps = state.get("game_steps")
        if game_steps is not None and not (
            isinstance(game_steps, list) and all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in game_steps)
        ):
            raise ValueError(f"state agent game_steps: expected step counts, got {game_steps!r:.80}")
        self.game_steps = None if game_steps is None else np.asarray(game_steps, dtype=np.int64)
        self.start_level = saved_level(state["start_level"])

    def state_dict(self) -> dict[str, Any]:
        moved = {"pull_target": self.pull_target.state_dict()} if self.config.pull_to_latest_held else {}
        return {**super().state_dict(), "start": self.start.state_dict(), **moved}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.start.load_state_dict(state["start"])
        if self.config.pull_to_latest_held:  # not resumable: a run with it saved its target
            self.pull_target.load_state_dict(state["pull_target"])


Agent = FinetuneAgent


class GameClock:
    """The envs as the loop steps them, counting each game's steps into ``agent.game_steps`` (for
    the roll-in); all else is the envs'."""

    def __init__(self, env: Any, agent: FinetuneAgent) -> None:
        self.env, self.agent = env, agent
        if agent.game_steps is None or len(agent.game_steps) != env.num_envs:  # a resumed run keeps its count
            agent.game_steps = np.zeros(env.num_envs, dtype=np.int64)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def step(self, actions: np.ndarray) -> Any:
        step = self.env.step(actions)
        assert self.agent.game_steps is not None
        self.agent.game_steps += 1
        self.agent.game_steps[step.ended] = 0
        return step


def learn(
    agent: FinetuneAgent, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: Any, log_every_episodes: int = 4
) -> None:
    """DQN's loop (:func:`agents.algorithms.dqn.learn`), the start evaluated first on a fresh run."""
    weighing = evidence_from_the_start(hooks, agent, progress)
    played = GameClock(env, agent) if agent.config.roll_in_steps else env
    dqn.learn(agent, played, progress, timesteps, weighing, buffer, log_every_episodes)


if TYPE_CHECKING:  # mypy holds this module to the contract of an algorithm module
    from agents.algorithms import finetune as _this_module

    _: AlgorithmModule = _this_module
