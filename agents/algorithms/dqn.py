"""Our own DQN, in one file: target network, Double-DQN targets, Huber loss, Adam, gradient
clipping, a linear epsilon schedule, and a training loop that batches everything it can. Its
replay buffer is :mod:`agents.algorithms.buffer`, its network :mod:`agents.algorithms.networks`, its
optimiser and exploration :mod:`agents.algorithms.qlearner` (shared with PQN), its counters
:mod:`agents.session.progress` and its hooks :mod:`agents.session.hooks`.

Hyperparameters mean exactly what they mean to stable-baselines3's DQN (the counts are env
steps summed over all envs; ``train_freq`` counts vector-env steps), so a comparison with
``agents.sb3_train`` is at equal settings.

The hot loop acts for all envs with one forward pass, trains on a minibatch with one
forward/backward, and never calls ``.item()``, prints, renders or saves per step.

From pixels, with the state in training only (``state_prediction``): the Q-network's features also
predict the game's state, a linear head trained beside the TD loss (Lample and Chaplot, "Playing
FPS Games with Deep Reinforcement Learning", 2017; :mod:`agents.algorithms.privileged`). The
replay buffer keeps each step's state beside its frames; the saved model is the Q-network alone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeGuard

import numpy as np
import torch
import torch.nn.functional as F

from agents.algorithms.buffer import Batch, DeviceReplayBuffer, ReplayBuffer
from agents.algorithms.networks import QNetwork, settings_of
from agents.algorithms.privileged import (
    FRAMES,
    STATE,
    STATE_SCALE_FLOOR,
    StateSteps,
    check_state_game,
    standardized_error,
    state_size,
    with_state,
)
from agents.algorithms.qlearner import QLearner
from agents.common.configuration.config import Section
from agents.common.configuration.hyperparameters import OurDQNConfig, StateDQNConfig
from agents.common.networks.augment import draw_shifts, shift_images
from agents.session.contract import AlgorithmModule
from agents.session.hooks import EpisodeLog, Figures, Hooks
from agents.session.progress import Progress

#: Envs that all start together stay as they are: the replay buffer mixes their phases.
STAGGER_ENVS = False
#: How far each minibatch moves the running variance the state's prediction error is measured in.
STATE_VARIANCE_STEP = 0.01


def predicts_state(config: OurDQNConfig) -> TypeGuard[StateDQNConfig]:
    """Whether a run's Q-network also predicts the game's state (``--algo custom``'s ``state_prediction``;
    the learners built on our DQN have no such key)."""
    return isinstance(config, StateDQNConfig) and config.state_prediction > 0


def checked_variance(variance: Any, size: int) -> torch.Tensor:
    """A checkpoint's running variance of the state: ``size`` finite numbers >= 0, or one line."""
    if not (
        isinstance(variance, torch.Tensor)
        and variance.shape == (size,)
        and bool((variance.isfinite() & (variance >= 0)).all())
    ):
        raise ValueError(f"state agent state_variance: expected {size} numbers >= 0, got {variance!r:.80}")
    return variance.float()


def td_targets(
    rewards: torch.Tensor,
    terminated: torch.Tensor,
    gamma: float | torch.Tensor,
    next_q_target: torch.Tensor,
    next_q_online: torch.Tensor | None = None,
) -> torch.Tensor:
    """Targets r + gamma * (1 - terminated) * Q_target(s', a*); for n-step samples ``r`` is
    the discounted reward sum and ``gamma`` each sample's gamma ** steps.

    a* is argmax of the online net's Q(s', .) (Double DQN) when ``next_q_online`` is given,
    else of the target net's. A time-limit truncation is not a termination: the caller
    stores the true next observation and terminated = 0, so the target bootstraps through it.
    """
    if next_q_online is None:
        next_values = next_q_target.max(dim=1).values
    else:
        next_values = next_q_target.gather(1, next_q_online.argmax(dim=1, keepdim=True)).squeeze(1)
    return rewards + gamma * (1.0 - terminated) * next_values


class DQNAgent(QLearner):
    """Online and target Q-networks with their optimiser."""

    FORMAT = "ballenvs-custom-dqn/1"  # of its checkpoints

    def __init__(
        self,
        spec: dict[str, Any],
        config: OurDQNConfig,
        device: str,
        seed: int = 0,
        amp: bool = False,
        compile: bool = False,
    ) -> None:
        super().__init__(spec, config, device, seed, amp, compile)
        self.target = QNetwork(spec).to(self.device)
        self.target.load_state_dict(self.q.state_dict())
        self.target.requires_grad_(False)
        self._target_fn: Callable[[Any], torch.Tensor] = torch.compile(self.target) if self.compiled else self.target
        if config.policy_averaging > 0:  # played from the start (tail_averaging's from its first fold)
            self.start_averaging()
        # The auxiliary head: the game's state from the Q-network's features (not part of the saved model),
        # and its error at the last update (train/state_error: 1 for predicting the mean).
        self.state_head: torch.nn.Linear | None = None
        self.state_error = torch.full((), float("nan"), device=self.device)
        self.state_variance: torch.Tensor | None = None  # each number's, a running mean over the minibatches
        if predicts_state(config):
            self.state_head = torch.nn.Linear(self.q.features_width, config.state_size).to(self.device)
            head = list(self.state_head.parameters())
            self.optimizer.add_param_group({"params": head})
            self._parameters = [*self._parameters, *head]  # clipped with the Q-network's

    def frames(self, observation: Any) -> Any:
        """What the Q-network reads: the observation, less the state a privileged run stores beside it."""
        return observation[FRAMES] if self.state_head is not None else observation

    def act(self, observation: Any, epsilon: float) -> np.ndarray:
        return self.epsilon_greedy(self.frames(observation), epsilon)

    def random_actions(self, n: int) -> np.ndarray:
        return self.rng.integers(self.n_actions, size=n)

    def warm_up_actions(self, observations: Any, n: int) -> np.ndarray:
        """The actions of the ``n`` envs before ``learning_starts``: uniform, as SB3's."""
        return self.random_actions(n)

    def augment(self, batch: Batch) -> Batch:
        """The minibatch with each sample's frames randomly shifted (``augment_shift``; DrQ): its
        observation and next observation by the same shift, drawn from the agent's generator."""
        shifts = draw_shifts(self.rng, len(batch.actions), self.config.augment_shift)

        def shifted(observation: Any) -> Any:  # a privileged run's frames; its state stays
            if self.state_head is None:
                return shift_images(observation, shifts)
            return {FRAMES: shift_images(observation[FRAMES], shifts), STATE: observation[STATE]}

        return batch._replace(observations=shifted(batch.observations), next_observations=shifted(batch.next_observations))

    def update(self, batch: Batch) -> torch.Tensor:
        """One gradient step on a minibatch; returns the loss as a tensor (no sync with the device)."""
        loss = self.loss(batch) if self.state_head is None else self.loss_predicting_state(batch)
        self.gradient_step(loss)
        if self.averaged is not None:
            with torch.no_grad():
                torch._foreach_lerp_(*self._averaging, self.config.policy_averaging)
        return loss.detach()

    def loss(self, batch: Batch) -> torch.Tensor:
        """What an update minimises: the TD loss (an algorithm built on this one adds its terms)."""
        return self.td_loss(batch)

    def loss_predicting_state(self, batch: Batch) -> torch.Tensor:
        """The TD loss on the minibatch's frames plus the state's prediction from the same features
        (one pass through the encoder for both heads), each number over its running spread."""
        assert self.state_head is not None  # made where state_prediction is set
        states = batch.observations[STATE]
        batch = batch._replace(observations=batch.observations[FRAMES], next_observations=batch.next_observations[FRAMES])
        with self._autocast():
            features = self.q.features(batch.observations)
            q_values, predicted = self.q.head(features).float(), self.state_head(features)
        variance = states.float().var(dim=0)
        if self.state_variance is None:
            self.state_variance = variance
        else:  # a minibatch alone may hold one phase of the game (a number that has not moved in it)
            self.state_variance = torch.lerp(self.state_variance, variance, STATE_VARIANCE_STEP)
        error = standardized_error(predicted, states, self.state_variance.sqrt().clamp_min(STATE_SCALE_FLOOR))
        self.state_error = error.detach()
        return self.td_loss(batch, q_values) + self.config.state_prediction * error

    def figures(self) -> dict[str, float]:
        """What the log shows of the agent's own every few episodes (a device sync: not per step)."""
        return {} if self.state_head is None else {"train/state_error": float(self.state_error)}

    def next_action_values(self, next_observations: torch.Tensor) -> torch.Tensor | None:
        """The values whose argmax picks the action a target bootstraps on: the online network's
        (Double DQN), or None: the target network's own max."""
        return self._q_fn(next_observations).float() if self.config.double_q else None

    def td_loss(self, batch: Batch, q_values: torch.Tensor | None = None) -> torch.Tensor:
        """The Huber loss of the minibatch's Q-values to their (Double-DQN, n-step) targets;
        ``q_values``: the online network's on ``batch.observations``, where a caller has them."""
        config = self.config
        with torch.no_grad(), self._autocast():
            next_q_target = self._target_fn(batch.next_observations).float()
            choosing = self.next_action_values(batch.next_observations)
            discounts = config.gamma if batch.discounts is None else batch.discounts
            targets = td_targets(batch.rewards, batch.terminated, discounts, next_q_target, choosing)
        if q_values is None:
            with self._autocast():
                q_values = self._q_fn(batch.observations).float()
        q_taken = q_values.gather(1, batch.actions.unsqueeze(1)).squeeze(1)
        return F.smooth_l1_loss(q_taken, targets)

    @torch.no_grad()
    def update_target(self) -> None:
        """target <- tau * online + (1 - tau) * target; tau = 1 is a hard copy."""
        if self.config.tau >= 1.0:
            self.target.load_state_dict(self.q.state_dict())
        else:
            torch._foreach_lerp_(list(self.target.parameters()), list(self.q.parameters()), self.config.tau)

    def state_dict(self) -> dict[str, Any]:
        head: dict[str, Any] = {} if self.state_head is None else {"state_head": self.state_head.state_dict()}
        if self.state_variance is not None:
            head["state_variance"] = self.state_variance
        return {**super().state_dict(), "target": self.target.state_dict(), **head}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        super().load_state_dict(state)
        self.target.load_state_dict(state["target"])
        if self.state_head is not None:
            self.state_head.load_state_dict(state["state_head"])
            variance = state.get("state_variance")
            self.state_variance = None if variance is None else checked_variance(variance, self.config.state_size)


Agent = DQNAgent


def replay_buffer(
    config: OurDQNConfig, observation_space: Any, device: str | torch.device, seed: int | None
) -> ReplayBuffer | DeviceReplayBuffer:
    """The replay buffer a config asks for (its size, and n-step returns): on a GPU, resident in
    its memory (:class:`DeviceReplayBuffer`); else in host arrays."""
    kind = DeviceReplayBuffer if torch.device(device).type == "cuda" else ReplayBuffer
    if predicts_state(config):  # each step's state kept beside its frames
        observation_space = with_state(observation_space, config.state_size)
    return kind(config.buffer_size, observation_space, device, seed=seed, n_steps=config.n_steps, gamma=config.gamma)


def gradient_steps_per_train(config: OurDQNConfig, n_envs: int) -> int:
    """Updates every ``train_freq`` vector steps: ``gradient_steps``, or with -1 as many as the env
    steps collected meanwhile (stable-baselines3's meaning)."""
    return config.gradient_steps if config.gradient_steps > 0 else config.train_freq * n_envs


def learn(
    agent: DQNAgent,
    env: Any,
    progress: Progress,
    timesteps: int,
    hooks: Hooks,
    buffer: ReplayBuffer | DeviceReplayBuffer,
    log_every_episodes: int = 4,
) -> None:
    """Collect ``timesteps`` more env steps from ``env`` (see :func:`agents.environments.steps.make_steps`),
    learning as configured, or fewer if ``hooks.on_step`` says stop. A run that predicts the game's
    state sees it beside its observations (:class:`StateSteps`)."""
    if agent.state_head is not None:
        env = StateSteps(env, agent.config.game)
        hooks = Figures(hooks, agent.figures)
    config, n_envs = agent.config, env.num_envs
    gradient_steps = gradient_steps_per_train(config, n_envs)
    target_every = max(config.target_update_interval // n_envs, 1)  # in vector steps, as SB3
    log = EpisodeLog(hooks, progress.num_timesteps, log_every_episodes)
    loss: torch.Tensor | None = None
    end = progress.num_timesteps + timesteps
    vec_steps = progress.num_timesteps // n_envs  # a resumed run keeps its phase of train_freq and the target updates
    obs = env.first_observations()
    while progress.num_timesteps < end:
        if progress.num_timesteps < config.learning_starts:
            actions = agent.warm_up_actions(obs, n_envs)
        else:
            actions = agent.act(obs, progress.epsilon(config))
        step = env.step(actions)
        buffer.add(obs, step.next_observations, actions, step.rewards, step.terminated, step.ended)
        obs = step.observations
        progress.num_timesteps += n_envs
        vec_steps += 1
        log.add(progress, step.episodes, loss)
        if vec_steps % config.train_freq == 0 and progress.num_timesteps > config.learning_starts:
            if config.linear_learning_rate:
                agent.set_learning_rate(progress.progress_remaining())
            in_tail = progress.progress_remaining() < config.tail_averaging
            for _ in range(gradient_steps):
                batch = buffer.sample(config.batch_size)
                loss = agent.update(agent.augment(batch) if config.augment_shift else batch)
                if in_tail:
                    agent.average_tail()
        if vec_steps % target_every == 0:
            agent.update_target()
        if not hooks.on_step(progress):
            break


def settings(section: Section, observation_space: Any, action_space: Any) -> tuple[StateDQNConfig, dict[str, Any]]:
    """The agent's hyperparameters and network spec from a (checked) config section and the spaces it will see."""
    config, spec = settings_of(StateDQNConfig, section, observation_space, action_space)
    if predicts_state(config):
        config.game = check_state_game(section, "state_prediction")
        config.state_size = state_size(config.game)
    return config, spec


if TYPE_CHECKING:  # mypy holds this module to the contract of an algorithm module
    from agents.algorithms import dqn as _this_module

    _: AlgorithmModule = _this_module
