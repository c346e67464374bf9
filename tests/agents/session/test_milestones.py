"""The run's milestones: checkpoints and evaluations fall on their grids, counted from the
learner's own steps, and none when their frequencies are 0."""

from __future__ import annotations

from agents.session.console import Console
from agents.session.milestones import Milestones, best_model_saver


class Recorder:
    """A learner as the milestones see it: what it was asked to save, and its evaluations."""

    def __init__(self) -> None:
        self.saved: list[str] = []

    def save(self, path):
        self.saved.append(f"{path.parent.name}/{path.name}")

    def policy(self):
        return "policy"


#: A logger as the milestones use it: an evaluation's row is dumped.
LOGGER = type("Logger", (), {"dump": lambda self, steps: None})()


class Evaluations:
    latest = None  # an Evaluator's last outcome: none that a learner reads here

    def __init__(self) -> None:
        self.at: list[int] = []

    def __call__(self, policy, steps):
        assert policy == "policy"
        self.at.append(steps)

    def close(self):
        pass


def test_milestones_fall_on_their_grids_counted_from_the_learners_steps(tmp_path):
    learner, evaluations = Recorder(), Evaluations()
    console = Console(1000, 0, 0, enabled=False)
    milestones = Milestones(learner, tmp_path, console, LOGGER, ".pt", save_freq=300, evaluator=evaluations, eval_freq=500)
    milestones.start(250)  # a resumed run: the grids continue where the run is
    for steps in range(254, 1300, 4):  # a vector env of 4: each milestone at the first step past its mark
        assert milestones.on_step(steps)
    assert learner.saved == [f"checkpoints/model_{s}_steps.pt" for s in (302, 602, 902, 1202)]
    assert evaluations.at == [502, 1002]
    best_model_saver(learner, tmp_path, ".pt")()
    assert learner.saved[-1] == f"{tmp_path.name}/best_model.pt"


def test_no_milestone_when_their_frequencies_are_zero(tmp_path):
    learner = Recorder()
    milestones = Milestones(learner, tmp_path, Console(100, 0, 0, enabled=False), LOGGER, ".pt", 0, Evaluations(), 0)
    milestones.start(0)
    for steps in range(1, 1000):
        milestones.on_step(steps)
    assert learner.saved == [] and milestones.evaluator is None
