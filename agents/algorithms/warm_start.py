"""The warm start, for the learners that begin from a model that already plays (``start_from``: a
distilled student, an earlier run's DQN): :mod:`agents.algorithms.finetune`, our PPO
(:mod:`agents.algorithms.ppo`) and, for its network alone, :mod:`agents.algorithms.kickstart`.

1. **The start** (:func:`check_start`, :func:`load_start`): its network is the run's, and its
   weights are read as Q-values. A distilled student's outputs are logits of its teacher's policy,
   softmax(values / temperature): its last layer is scaled by that temperature, so that its outputs
   are Q-values on the teacher's scale whose softmax(Q / temperature) is the student's policy and
   whose argmax is its action.
2. **The evidence** (:class:`Evidence`): the run's start is evaluated before its first step (the
   start's level); after calibration, each evaluation that holds that level (:func:`holds`)
   releases the pull to the start by a factor, each that falls takes a release back
   (:func:`weighed`). While ``calibration_steps`` last, the learner is ``calibrating``: only its
   values learn.
3. **Its resume state** (:func:`saved_amount`, :func:`saved_level`): the pull and the start's
   level, checked as a tampered checkpoint could hold them.
"""

from __future__ import annotations

import math
from typing import Any, Protocol

import torch

from agents.algorithms.networks import QNetwork
from agents.artifacts.models import find_model
from agents.common.errors import UsageError
from agents.session.checkpoint import load_checkpoint
from agents.session.evaluation import Evaluation
from agents.session.hooks import Figures, Hooks
from agents.session.progress import Progress
from ballenvs.duel.roster import HELD_OUT_PLAYERS
from ballenvs.state import parts


def start_weights(path: str) -> dict[str, Any]:
    """The checkpoint of the model a run starts from (one of ours: a distilled student, a DQN)."""
    try:
        model, _ = find_model(path)
    except UsageError as error:
        raise UsageError(f"start_from {path!r}: {error}") from None
    return load_checkpoint(model)


def check_start(path: str, spec: dict[str, Any]) -> None:
    """``start_from``'s network is this run's (``spec``) and its weights fit it, or one line
    saying how it differs."""
    state = start_weights(path)
    if state["spec"] != spec:
        raise UsageError(f"start_from {path!r}: its network {state['spec']} is not this run's ({spec})")
    try:
        QNetwork(spec).load_state_dict(state["agent"]["q"])
    except (RuntimeError, KeyError) as error:  # a file whose weights its spec does not describe
        first = str(error).strip().splitlines()[-1].strip()
        raise UsageError(f"start_from {path!r}: its weights do not fit its network ({first})") from None
    temperature = state["config"].get("temperature")
    if temperature is not None and not (isinstance(temperature, float) and 0.0 < temperature < float("inf")):
        raise UsageError(f"start_from {path!r}: its distill temperature {temperature!r} is not a positive number")


def load_start(network: QNetwork, path: str) -> None:
    """``network`` (this run's shape) given the start's weights, as Q-values (see the module docstring)."""
    state = start_weights(path)
    network.load_state_dict(state["agent"]["q"])
    temperature = state["config"].get("temperature")  # a distilled student's: its logits are values / it
    if isinstance(temperature, float):
        last = network.head[-1]
        assert isinstance(last, torch.nn.Linear)  # a QNetwork's head ends in its actions' layer
        with torch.no_grad():
            last.weight.mul_(temperature)
            last.bias.mul_(temperature)


def holds(evaluation: Evaluation, level: Evaluation, margin: float) -> bool:
    """Whether ``evaluation`` holds the start's ``level``: every opponent's win rate at most
    ``margin`` below the start's; a game without winners, its mean return within ``margin`` of the
    start's as a share of it. The held-out players (the champion, the planner: measures, never what
    trains a learner) are reported but not weighed, as the best model's score leaves them out."""
    weighed_rates = {name: rate for name, rate in level.win_rates.items() if name not in HELD_OUT_PLAYERS}
    if weighed_rates:
        return all(evaluation.win_rates.get(name, 0.0) >= rate - margin for name, rate in weighed_rates.items())
    return evaluation.mean_return >= level.mean_return - margin * abs(level.mean_return)


def weighed(value: float, held: bool, release: float, most: float) -> float:
    """What the evidence sets (the pull's weight, the roll-in) after an evaluation: multiplied by
    ``release`` if it held the start's level, divided by it, up to ``most``, if it fell."""
    return value * release if held else min(value / release, most)


def saved_amount(value: Any, most: float, what: str) -> float:
    """A weight the evidence sets (the pull, the roll-in) as a resumed state holds it: a number in
    [0, ``most``], where :func:`weighed` keeps it; a tampered one (NaN, negative, past ``most``, a
    string) would change what the run learns without a word."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0.0 <= value <= most:
        raise ValueError(f"state agent {what}: expected a number in [0, {most:g}], got {value!r:.80}")
    return float(value)


def saved_level(level: Any) -> Evaluation | None:
    """The start's evaluation as a resumed state holds it: none, or its steps, a finite mean return
    and win rates in [0, 1] by opponent."""
    if level is None:
        return None
    level = parts(level, ("steps", "mean_return", "win_rates"), "agent start_level")
    steps, mean_return, win_rates = level["steps"], level["mean_return"], level["win_rates"]
    rates_ok = isinstance(win_rates, dict) and all(
        isinstance(name, str) and isinstance(rate, (int, float)) and not isinstance(rate, bool) and 0.0 <= rate <= 1.0
        for name, rate in win_rates.items()
    )
    number = isinstance(mean_return, (int, float)) and not isinstance(mean_return, bool) and math.isfinite(mean_return)
    if not (isinstance(steps, int) and not isinstance(steps, bool) and steps >= 0 and number and rates_ok):
        raise ValueError(
            f"state agent start_level: expected its steps, a finite mean return and win rates in [0, 1], got {level!r:.120}"
        )
    return Evaluation(steps, float(mean_return), {name: float(rate) for name, rate in win_rates.items()})


class Weighed(Protocol):
    """A learner whose pull to its start is weighed on evaluations (ours: FinetuneAgent, PPOAgent)."""

    config: Any
    calibrating: bool
    start_level: Evaluation | None

    def weigh(self, evaluation: Evaluation) -> None: ...

    def schedules(self) -> dict[str, float]:
        """What its evidence sets now, logged with every row (``train/pull_weight``, ...)."""
        ...


class Evidence(Figures):
    """The run's hooks, and after each of its evaluations the pull weighed on it; what the evidence
    sets is logged with every row (``train/pull_weight``, the roll-in's ``train/roll_in_steps``)."""

    def __init__(self, hooks: Hooks, agent: Weighed) -> None:
        super().__init__(hooks, agent.schedules)
        self.agent = agent
        self.seen = None if agent.start_level is None else agent.start_level.steps

    def on_step(self, progress: Progress) -> bool:
        self.agent.calibrating = progress.num_timesteps < self.agent.config.calibration_steps
        go_on = self.hooks.on_step(progress)  # may evaluate
        latest = self.hooks.latest_evaluation()
        if latest is not None and latest.steps != self.seen:
            self.seen = latest.steps
            self.agent.weigh(latest)
        return go_on


def evidence_from_the_start(hooks: Hooks, agent: Weighed, progress: Progress) -> Evidence:
    """The run's hooks with the pull weighed on them (:class:`Evidence`), the start's level
    evaluated first on a fresh run (the bar every later evaluation is held to)."""
    agent.calibrating = progress.num_timesteps < agent.config.calibration_steps
    if agent.start_level is None and progress.num_timesteps == 0:
        agent.start_level = hooks.evaluate_now(progress)
    return Evidence(hooks, agent)
