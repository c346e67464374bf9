"""Our PPO (Schulman et al., "Proximal Policy Optimization Algorithms", 2017), in one file: from
nothing, or fine-tuned from a model that plays without unlearning what it knows.

The rollouts PQN learns from too (:mod:`agents.algorithms.rollouts`): many vectorised envs play a
short rollout, acting by sampling the policy; GAE's advantages (Schulman et al. 2016) are computed
over it in one backward sweep; a few epochs of minibatch updates of the clipped surrogate, a
critic's squared error and an entropy bonus follow, and the rollout is thrown away. The agent is
its own actor-critic (:class:`PPOAgent`): the ``actor``'s outputs are the policy's logits (a
distilled student's are), and everything that plays a saved model plays their argmax; the
``critic`` is a second network of the same shape with one output.

**Fine-tuning** (``start_from``): where temporal-difference learning on a network that holds a
policy rewrites its values before it improves on them (RESULTS: kickstarted self-play collapsed,
our fine-tuned DQN stayed level with its start), a policy-gradient learner keeps the policy itself
and learns values beside it. So, from a start (a distilled student, an earlier run's model):

1. **The critic warmed up first** (``calibration_steps``): the start's policy plays and only the
   critic learns, its values fitted to the start's own returns; no update changes the policy
   until the advantages it will follow mean something.
2. **A pull to the start** (``pull_weight``): the cross-entropy of the policy to the start's,
   softmax(start's values / ``pull_temperature``), beside the PPO loss (AlphaStar's KL to its
   supervised policy), **released on evidence** (:mod:`agents.algorithms.warm_start`, as
   finetune's), by evaluations that hold the start's level, taken back by ones that fall.

**From pixels, with the state in training only** (``critic_reads_state``, ``state_prediction``): the
critic reads the game's state while the actor reads the frames, and the actor's features learn to
predict the state beside the policy (:mod:`agents.algorithms.privileged`); a saved model is the
actor, which plays from the frames alone.

Hyperparameters come from ``zoo_configs/ppo.yml`` (ours: the RL Zoo does not read it).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import torch.nn.functional as F
from gymnasium import spaces

from agents.algorithms import rollouts
from agents.algorithms.networks import QNetwork, network_spec, settings_of
from agents.algorithms.privileged import (
    FRAMES,
    STATE,
    StateSteps,
    check_state_game,
    spread,
    standardized_error,
    state_size,
    with_state,
)
from agents.algorithms.rollouts import STAGGER_ENVS, KeptRollout, Rollout, check_minibatches, replay_buffer
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
from agents.common.configuration.hyperparameters import (
    ClippedPolicy,
    PredictsState,
    QConfig,
    Rollouts,
    StartedFrom,
    TailAveraging,
    key,
    redefault,
)
from agents.common.errors import UsageError
from agents.common.readers import count, torch_weights
from agents.common.tensors import rows_of
from agents.session.checkpoint import check_optimizer, check_tail_mean
from agents.session.contract import AlgorithmModule
from agents.session.evaluation import Evaluation
from agents.session.hooks import Figures, Hooks
from agents.session.progress import Progress
from ballenvs.state import generator_state, parts, set_generator_state

__all__ = ["STAGGER_ENVS", "Agent", "learn", "replay_buffer", "settings"]  # replay_buffer: the rollouts', none


@dataclass
class PPOConfig(PredictsState, StartedFrom, ClippedPolicy, Rollouts, TailAveraging, QConfig):
    """Our PPO's hyperparameters (agents.algorithms.ppo, zoo_configs/ppo.yml). Its exploration is
    the policy's own sampling; epsilon (0 unless set) plays a share of uniform actions beside it,
    and the ratio's old probability is then the mixture's."""

    learning_rate: float | str = redefault(QConfig, "learning_rate", "lin_3.0e-4")
    exploration_initial_eps: float = redefault(QConfig, "exploration_initial_eps", 0.0)
    exploration_final_eps: float = redefault(QConfig, "exploration_final_eps", 0.0)
    max_grad_norm: float = redefault(QConfig, "max_grad_norm", 0.5)
    rollout_steps: int = redefault(Rollouts, "rollout_steps", 128)
    n_epochs: int = redefault(Rollouts, "n_epochs", 4)
    ent_coef: float = redefault(ClippedPolicy, "ent_coef", 0.005)
    target_kl: float = key(
        0.0, "an epoch's updates stop once the policy has moved this far from the rollout's (KL); 0: never", low=0
    )
    kl_coef: float = key(
        0.0, "the starting weight of a penalty on the policy's KL from the rollout's, beside the clip (RLlib's "
        "kl_coeff, 0.2 there); 0: none", low=0, high=100,
    )  # fmt: skip
    kl_penalty_target: float = key(
        0.01, "the KL the penalty's weight follows: after every rollout's updates, x1.5 if their mean KL passed twice "
        "it, x0.5 if under half (RLlib's kl_target)", low=0, high=10, low_open=True,
    )  # fmt: skip
    encoder_from: str = key(
        "", "a file of encoder weights the actor's CNN starts from (python -m benchmarks.state_reader: an encoder "
        "trained to read the state from the frames), fine-tuned from there; empty: none",
    )  # fmt: skip
    critic_reads_state: bool = key(
        False, "the critic reads the game's state (what obs_type=state shows; env_kwargs state_info: true), the actor "
        "the observation: an asymmetric actor-critic, whose saved model is the actor alone",
    )  # fmt: skip

    @property
    def reads_state(self) -> bool:
        """Whether training reads the game's state beside the observation (privileged information)."""
        return self.critic_reads_state or self.state_prediction > 0


def settings(section: Section, observation_space: Any, action_space: Any) -> tuple[PPOConfig, dict[str, Any]]:
    """The config and the policy's network spec; a start, if named, fitting that network."""
    config, spec = settings_of(PPOConfig, section, observation_space, action_space)
    check_minibatches(config, section)
    if config.reads_state:
        config.game = check_state_game(section, "critic_reads_state and state_prediction")
        config.state_size = state_size(config.game)
    if config.start_from:
        check_start(config.start_from, spec)
    if config.encoder_from:
        load_encoder(QNetwork(spec), config.encoder_from)  # it fits this network, or one line before any folder
    return config, spec


#: What a file of encoder weights says it is (benchmarks.state_reader writes them).
ENCODER_FORMAT = "ballenvs-state-reader/1"


def load_encoder(network: QNetwork, path: str) -> None:
    """``network``'s encoders set from a reader file's (``encoder_from``); one line if the file is not
    one, or its encoder is not this network's."""
    what = f"encoder_from {path!r}"
    if not Path(path).is_file():  # a folder, a FIFO (torch.load would wait on it) or nothing
        raise UsageError(f"{what}: not a file (a reader's weights: python -m benchmarks.state_reader --out FILE)")
    saved = torch_weights(Path(path), what)
    if not isinstance(saved, dict) or saved.get("format") != ENCODER_FORMAT or not isinstance(saved.get("encoders"), dict):
        raise UsageError(
            f"{what}: not a reader's weights (expected format {ENCODER_FORMAT!r}, python -m benchmarks.state_reader)"
        )
    try:
        network.encoders.load_state_dict(saved["encoders"])
    except (RuntimeError, KeyError) as error:
        raise UsageError(f"{what}: not this run's encoder ({str(error).strip().splitlines()[0]})") from None


#: The critic's hidden layers where it reads the state: the state section's network (ppo.yml).
STATE_CRITIC_NET_ARCH = [256, 256]


class PPORollout(Rollout):
    """The rollout, and the log-probability of each action under the policy that played it."""

    def __init__(self, steps: int, n_envs: int, observation_space: Any, device: torch.device) -> None:
        super().__init__(steps, n_envs, observation_space, device)
        self.log_probs = torch.zeros((steps, n_envs), device=device)

    def _stores(self) -> dict[str, torch.Tensor]:
        return {**super()._stores(), "log_probs": self.log_probs}


def gae(
    rewards: torch.Tensor,
    terminated: torch.Tensor,
    ended: torch.Tensor,
    values: torch.Tensor,
    next_values: torch.Tensor,
    gamma: float,
    gae_lambda: float,
) -> torch.Tensor:
    """GAE's advantages of a (T, N) rollout, in one backward sweep:

        A_t = delta_t + gamma * lambda * (1 - ended_t) * A_{t+1},
        delta_t = r_t + gamma * (1 - terminated_t) * V'_t - V_t

    with V'_t the value of the step's real next observation (a truncated episode bootstraps on its
    last observation's; a terminated one on nothing) and A_T = 0 past the rollout's end."""
    advantages = torch.empty_like(rewards)
    following = torch.zeros_like(rewards[0])
    for t in reversed(range(rewards.shape[0])):
        delta = rewards[t] + gamma * (1.0 - terminated[t]) * next_values[t] - values[t]
        following = delta + gamma * gae_lambda * (1.0 - ended[t]) * following
        advantages[t] = following
    return advantages


class PPOAgent:
    """The actor (the policy's logits) and the critic, two networks of the same body with one Adam
    over both; the start and its pull when fine-tuning. A saved model is the actor: everything that
    plays one plays its argmax."""

    FORMAT = "ballenvs-custom-ppo/1"
    INEXACT_RESUME: str | None = None

    def __init__(
        self, spec: dict[str, Any], config: PPOConfig, device: str, seed: int = 0, amp: bool = False, compile: bool = False
    ) -> None:
        torch.manual_seed(seed)
        self.spec, self.config, self.device = spec, config, torch.device(device)
        self.n_actions = spec["n_actions"]
        self.actor = QNetwork(spec).to(self.device)
        critic_spec = {**spec, "n_actions": 1}
        if config.critic_reads_state:
            state = spaces.Box(-np.inf, np.inf, (config.state_size,), np.float32)
            critic_spec = network_spec(state, 1, "MlpPolicy", {"net_arch": STATE_CRITIC_NET_ARCH})
        self.critic = QNetwork(critic_spec).to(self.device)
        # The auxiliary head: the game's state from the actor's features (not part of the saved actor).
        self.state_head: torch.nn.Linear | None = None
        # The state's spread over the rollout being learned (its prediction's error is in its units),
        # and that error at the last minibatch (train/state_error, against 1 for predicting the mean).
        self.state_scale = torch.ones(config.state_size, device=self.device)
        self.state_error = torch.full((), float("nan"), device=self.device)
        if config.state_prediction > 0:
            self.state_head = torch.nn.Linear(self.actor.features_width, config.state_size).to(self.device)
        heads = [] if self.state_head is None else list(self.state_head.parameters())
        self._parameters = [*self.actor.parameters(), *self.critic.parameters(), *heads]
        # One fused kernel for all parameters: the per-tensor default was 10x slower on the CPU.
        self.optimizer = torch.optim.Adam(self._parameters, lr=config.initial_learning_rate, fused=True)
        self.n_updates = 0
        self.rng = np.random.default_rng(seed)  # the epsilon share's uniform moves
        self.kept = KeptRollout(PPORollout, seed)  # the rollout, and its minibatches' order
        # bf16 autocast and torch.compile pay off on a GPU; on the CPU they were slower.
        self.amp = amp and self.device.type == "cuda"
        self._actor_fn: Any = torch.compile(self.actor) if compile and self.device.type == "cuda" else self.actor
        # tail_averaging: over the run's last share, the uniform mean of the actor's weights is what
        # is evaluated and saved (made at its first fold); the actor itself still acts and learns.
        self.averaged: QNetwork | None = None
        self.tail_updates = 0
        self.start: QNetwork | None = None  # the start's policy logits, frozen
        self.pull = 0.0  # the pull's weight, now
        self.start_level: Evaluation | None = None  # the start's evaluation, before the first step
        self.calibrating = False  # kept by Evidence as the steps go by
        self.kl_coef = config.kl_coef  # the KL penalty's weight, now (adapted after every rollout)
        if config.encoder_from:
            load_encoder(self.actor, config.encoder_from)
        if config.start_from:
            load_start(self.actor, config.start_from)  # its values ...
            last = self.actor.head[-1]
            assert isinstance(last, torch.nn.Linear)  # a QNetwork's head ends in its actions' layer
            with torch.no_grad():  # ... as the logits of softmax(values / pull_temperature)
                last.weight.div_(config.pull_temperature)
                last.bias.div_(config.pull_temperature)
            self.start = QNetwork(spec).to(self.device).requires_grad_(False).eval()
            self.start.load_state_dict(self.actor.state_dict())
            self.pull = config.pull_weight
            self.calibrating = config.calibration_steps > 0

    @property
    def online(self) -> QNetwork:
        return self.actor

    @property
    def played(self) -> QNetwork:
        """The actor, or over tail_averaging's share its weights' mean."""
        return self.actor if self.averaged is None else self.averaged

    @property
    def snapshotted(self) -> QNetwork:
        """The actor: self-play's pool faces the learner as it trains, not the tail's mean."""
        return self.actor

    def _autocast(self) -> Any:
        return torch.autocast("cuda", dtype=torch.bfloat16, enabled=self.amp)

    def _frames(self, observation: Any) -> Any:
        """What the actor reads: the observation, less the state a privileged run stores beside it."""
        return observation[FRAMES] if self.config.reads_state else observation

    def _critic_input(self, observation: Any) -> Any:
        return observation[STATE] if self.config.critic_reads_state else self._frames(observation)

    def rollout_for(self, steps: int, n_envs: int, observation_space: Any) -> Rollout:
        """The rollout for the envs' observations, and the state beside them where training reads it."""
        if self.config.reads_state and not isinstance(observation_space, spaces.Dict):
            observation_space = with_state(observation_space, self.config.state_size)
        return self.kept.rollout_for(steps, n_envs, observation_space, self.device)

    def play(self, rollout: Rollout, t: int, observation: Any, epsilon: float) -> np.ndarray:
        """Actions sampled from the policy (a share ``epsilon`` uniform), their log-probabilities
        under the policy that played them, and the critic's values, stored at step ``t``."""
        assert isinstance(rollout, PPORollout)
        observation = rollout.store_observation(t, observation)
        with torch.inference_mode(), self._autocast():
            probabilities = F.softmax(self._actor_fn(self._frames(observation)).float(), dim=1)
            rollout.values[t] = self.critic(self._critic_input(observation)).float().squeeze(1)
        sampled = torch.multinomial(probabilities.cpu(), 1, generator=self.kept.generator).squeeze(1).numpy()
        actions = sampled
        if epsilon > 0:  # a share of uniform moves
            uniform = self.rng.random(len(sampled)) < epsilon
            actions = np.where(uniform, self.rng.integers(self.n_actions, size=len(sampled)), sampled)
        played = probabilities.gather(1, torch.as_tensor(actions, device=self.device).unsqueeze(1)).squeeze(1)
        rollout.log_probs[t] = torch.log((1.0 - epsilon) * played + epsilon / self.n_actions)
        return actions

    def values(self, observation: Any) -> torch.Tensor:
        with torch.inference_mode(), self._autocast():
            return self.critic(self._critic_input(observation)).float().squeeze(1)

    def learn_rollout(
        self, rollout: Rollout, observation: Any, stop_asked: Callable[[], bool] = rollouts.never
    ) -> torch.Tensor | None:
        config = self.config
        advantages = gae(
            rollout.rewards,
            rollout.terminated,
            rollout.ended,
            rollout.values,
            rollouts.next_values(self, rollout, observation),
            config.gamma,
            config.gae_lambda,
        )
        return rollouts.update_or_undo(self, lambda: self.update(rollout, advantages, stop_asked))

    def update(
        self, rollout: Rollout, advantages: torch.Tensor, stop_asked: Callable[[], bool] = rollouts.never
    ) -> torch.Tensor:
        """``n_epochs`` passes over the rollout in ``n_minibatches`` shuffled minibatches, each one
        gradient step on the clipped surrogate (advantages normalised within the minibatch), the
        critic's error, the entropy bonus and the pull; while calibrating, the critic's error alone.
        Returns the last loss."""
        assert isinstance(rollout, PPORollout)
        config = self.config
        observations, actions = rollout.flat(), rollout.actions.flatten()
        old_log_probs, advantages = rollout.log_probs.flatten(), advantages.flatten()
        returns = advantages + rollout.values.flatten()
        if self.state_head is not None:  # each number of the state weighed alike: velocities vary a tenth as much
            self.state_scale = spread(observations[STATE])
        loss = torch.zeros((), device=self.device)
        moved_all: list[torch.Tensor] = []  # every minibatch's KL, for the penalty's weight
        for _ in range(config.n_epochs):
            order = torch.randperm(len(returns), generator=self.kept.generator).to(self.device)
            moved = []
            for batch in order.tensor_split(config.n_minibatches):
                rollouts.check_stop(stop_asked)
                rows = rows_of(observations, batch)
                with self._autocast():
                    values = self.critic(self._critic_input(rows)).float().squeeze(1)
                loss = config.vf_coef * F.mse_loss(values, returns[batch])
                if not self.calibrating:
                    policy_loss, kl = self.policy_loss(rows, actions[batch], old_log_probs[batch], advantages[batch])
                    loss = loss + policy_loss
                    moved.append(kl)
                    moved_all.append(kl)
                self.gradient_step(loss)
            if config.target_kl and moved and float(torch.stack(moved).mean()) > config.target_kl:
                break
        if self.kl_coef > 0 and moved_all:
            self.kl_coef = adapted_kl_coef(self.kl_coef, float(torch.stack(moved_all).mean()), config.kl_penalty_target)
        return loss.detach()

    def policy_loss(
        self, rows: Any, actions: torch.Tensor, old_log_probs: torch.Tensor, advantages: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """The clipped surrogate, less the entropy bonus, plus the pull and the state's prediction;
        and how far the policy has moved from the rollout's (an estimate of the KL, Schulman's k3)."""
        config = self.config
        frames = self._frames(rows)
        predicted = None
        with self._autocast():
            if self.state_head is None:
                logits = self._actor_fn(frames)
            else:  # one pass through the encoder for both heads
                features = self.actor.features(frames)
                logits, predicted = self.actor.head(features), self.state_head(features)
            log_policy = F.log_softmax(logits.float(), dim=1)
        log_probs = log_policy.gather(1, actions.unsqueeze(1)).squeeze(1)
        log_ratio = log_probs - old_log_probs
        ratio = log_ratio.exp()
        advantages = (advantages - advantages.mean()) / (advantages.std(correction=0) + 1e-8)  # a minibatch of 1: 0
        clipped = ratio.clamp(1.0 - config.clip_range, 1.0 + config.clip_range)
        surrogate = -torch.min(ratio * advantages, clipped * advantages).mean()
        entropy = -(log_policy.exp() * log_policy).sum(dim=1).mean()
        # k3, Schulman's estimate of KL(rollout's policy || now), unbiased and never negative
        moved = (ratio - 1.0) - log_ratio
        loss = surrogate - config.ent_coef * entropy
        if self.kl_coef > 0:
            loss = loss + self.kl_coef * moved.mean()
        if predicted is not None:
            error = standardized_error(predicted, rows[STATE], self.state_scale)
            self.state_error = error.detach()
            loss = loss + config.state_prediction * error
        if self.start is not None and self.pull > 0:
            with torch.no_grad(), self._autocast():
                start_policy = F.softmax(self.start(frames).float(), dim=1)
            loss = loss + self.pull * -(start_policy * log_policy).sum(dim=1).mean()
        return loss, moved.mean().detach()

    def gradient_step(self, loss: torch.Tensor) -> None:
        """One clipped Adam step on ``loss``."""
        self.optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self._parameters, self.config.max_grad_norm)
        self.optimizer.step()
        self.n_updates += 1

    def set_learning_rate(self, progress_remaining: float) -> float:
        """The step size at this point of the run (1: its start, 0: its end), as SB3 sets it."""
        config = self.config
        rate = config.initial_learning_rate * (progress_remaining if config.linear_learning_rate else 1.0)
        for group in self.optimizer.param_groups:
            group["lr"] = rate
        return rate

    def average_tail(self) -> None:
        """Fold the actor into tail_averaging's uniform mean (a copy of it on the first call)."""
        if self.averaged is None:
            self.averaged = QNetwork(self.spec).to(self.device).requires_grad_(False)
            self.averaged.load_state_dict(self.actor.state_dict())
        else:
            with torch.no_grad():
                weight = 1.0 / (self.tail_updates + 1)
                torch._foreach_lerp_(list(self.averaged.parameters()), list(self.actor.parameters()), weight)
        self.tail_updates += 1

    def weigh(self, evaluation: Evaluation) -> None:
        """The pull after an evaluation, weighed on the evidence (:mod:`agents.algorithms.warm_start`)."""
        if self.start_level is None:
            return
        config, held = self.config, holds(evaluation, self.start_level, self.config.pull_margin)
        if not (held and self.calibrating):  # no release while the critic warms up
            self.pull = weighed(self.pull, held, config.pull_release, config.pull_weight)

    def schedules(self) -> dict[str, float]:
        return {"train/pull_weight": self.pull}

    def figures(self) -> dict[str, float]:
        """What the log shows of the agent's own every few episodes (a device sync: not per step)."""
        return {} if self.state_head is None else {"train/state_error": float(self.state_error)}

    def runtime_state(self) -> dict[str, Any]:
        """What it holds between steps besides its networks and optimiser, for a resume that goes on
        exactly: its generators, the rollout cut short, the pull, the start's level, the penalty's weight."""
        level = None if self.start_level is None else self.start_level._asdict()
        own = {"rng": generator_state(self.rng), "pull": self.pull, "start_level": level, "kl_coef": self.kl_coef}
        return {**own, **self.kept.get_state()}

    def load_runtime_state(self, state: dict[str, Any]) -> None:
        state = parts(state, ("rng", "pull", "start_level"), "agent")
        set_generator_state(self.rng, state["rng"], "agent rng")
        self.kept.set_state(state)
        self.pull = saved_amount(state["pull"], self.config.pull_weight, "pull")
        # A checkpoint from before the penalty existed ran without one: its run's kl_coef is 0.
        self.kl_coef = saved_amount(state.get("kl_coef", self.config.kl_coef), MAX_KL_COEF, "kl_coef")
        self.start_level = saved_level(state["start_level"])

    def state_dict(self) -> dict[str, Any]:
        """The actor under ``q``, the key every model file names the network it plays by (its argmax)."""
        averaged = {} if self.averaged is None else {"averaged": self.averaged.state_dict(), "tail_updates": self.tail_updates}
        start = {} if self.start is None else {"start": self.start.state_dict()}
        head = {} if self.state_head is None else {"state_head": self.state_head.state_dict()}
        return {
            "q": self.actor.state_dict(), "critic": self.critic.state_dict(), "optimizer": self.optimizer.state_dict(),
            "n_updates": self.n_updates, **averaged, **start, **head,
        }  # fmt: skip

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.actor.load_state_dict(state["q"])
        self.critic.load_state_dict(state["critic"])
        if self.state_head is not None:
            self.state_head.load_state_dict(state["state_head"])
        own = [{key: value for key, value in group.items() if key != "params"} for group in self.optimizer.param_groups]
        self.optimizer.load_state_dict(state["optimizer"])
        check_optimizer(self.optimizer, own)
        self.n_updates = count(state["n_updates"], "state agent n_updates")
        self.tail_updates = count(state.get("tail_updates", 0), "state agent tail_updates")
        check_tail_mean(state, self.tail_updates)
        if self.tail_updates:
            self.averaged = QNetwork(self.spec).to(self.device).requires_grad_(False)
            self.averaged.load_state_dict(state["averaged"])
        if self.start is not None:
            self.start.load_state_dict(state["start"])


#: The most the KL penalty's weight grows to: past it a rollout's updates would be the penalty alone.
MAX_KL_COEF = 1e6


def adapted_kl_coef(kl_coef: float, kl: float, target: float) -> float:
    """The KL penalty's next weight, as RLlib's PPO adapts it: x1.5 when the updates moved the policy
    past twice the target, x0.5 when under half of it."""
    if kl > 2.0 * target:
        return min(kl_coef * 1.5, MAX_KL_COEF)
    if kl < 0.5 * target:
        return kl_coef * 0.5
    return kl_coef


Agent = PPOAgent


def learn(agent: PPOAgent, env: Any, progress: Progress, timesteps: int, hooks: Hooks, buffer: None = None) -> None:
    """The rollouts' loop (:func:`agents.algorithms.rollouts.learn`) with PPO's acting and updates; a
    fine-tuning run evaluates its start first and weighs the pull on every evaluation after. A run
    that reads the game's state sees it beside its observations (:class:`StateSteps`)."""
    if agent.config.reads_state:
        env = StateSteps(env, agent.config.game)
        hooks = Figures(hooks, agent.figures)
    if agent.start is None:
        rollouts.learn(agent, env, progress, timesteps, hooks)
        return
    rollouts.learn(agent, env, progress, timesteps, evidence_from_the_start(hooks, agent, progress))


if TYPE_CHECKING:  # mypy holds this module to the contract of an algorithm module
    from agents.algorithms import ppo as _this_module

    _: AlgorithmModule = _this_module
