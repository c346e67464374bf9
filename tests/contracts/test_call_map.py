"""CONTRIBUTING's map of the way to the first gradient step is the way a run takes: the files of
ours on the call stack when ``python -m agents.train`` makes its first update, in order, each
entered once (issue: at most 8 files for our DQN, at most 6 of ours before stable-baselines3's
own for SB3's DQN)."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from tests.helpers import REPO

#: Run in a fresh process: `python -m agents.train` with the update replaced by a look at the stack.
STACK_AT_FIRST_UPDATE = """
import json, os, runpy, sys, traceback

def stop_and_show(*args, **kwargs):
    ours = []
    for frame in traceback.extract_stack()[:-1]:
        path = os.path.relpath(frame.filename, {repo!r})
        if path.startswith(("agents" + os.sep, "ballenvs" + os.sep)):
            ours.append(path)
    print("STACK " + json.dumps(ours + UPDATE_DEFINED_IN), flush=True)
    loaded = sorted(name for name in sys.modules if name.split(".")[0] in ("agents", "ballenvs"))
    print("MODULES " + json.dumps(loaded), flush=True)
    os._exit(0)

UPDATE_DEFINED_IN = []  # the update's own file, whose frame the stand-in replaces
if {algo!r} == "custom":
    from agents.algorithms.qlearner import QLearner
    UPDATE_DEFINED_IN.append(os.path.relpath(QLearner.gradient_step.__code__.co_filename, {repo!r}))
    QLearner.gradient_step = stop_and_show
else:
    from stable_baselines3 import DQN
    DQN.train = stop_and_show
sys.argv = ["agents.train", *{argv!r}]
runpy.run_module("agents.train", run_name="__main__")
"""


def map_in_contributing(heading: str) -> list[str]:
    """The files of the text block after ``heading`` in CONTRIBUTING.md, one a line, in order."""
    text = (REPO / "CONTRIBUTING.md").read_text()
    block = text.split(heading, 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return [line.split()[0] for line in block.splitlines() if re.match(r"\s*(agents|ballenvs)/\S+\.py", line)]


def first_update(algo: str, tmp_path) -> tuple[list[str], list[str]]:
    """The files of ours on the stack at the run's first update, and the modules of ours loaded by then."""
    argv = ["--algo", algo, "--env", "UAVGrid-v0", "--n-envs", "2", "--timesteps", "2000", "--log-dir", str(tmp_path)]
    argv += ["--eval-freq", "0", "--save-freq", "0", "--no-progress", "--threads", "1"]
    argv += ["--hyperparams", "learning_starts=50", "buffer_size=1000"]
    script = STACK_AT_FIRST_UPDATE.format(repo=str(REPO), algo=algo, argv=argv)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith(("STACK ", "MODULES ")))
    assert said.keys() == {"STACK", "MODULES"}, f"no update was reached:\n{done.stdout}\n{done.stderr}"
    return json.loads(said["STACK"]), json.loads(said["MODULES"])


@pytest.fixture(scope="module")
def first_updates(tmp_path_factory):
    """``first_update`` of each algo, run once for this module's tests."""
    found: dict[str, tuple[list[str], list[str]]] = {}

    def of(algo: str) -> tuple[list[str], list[str]]:
        if algo not in found:
            found[algo] = first_update(algo, tmp_path_factory.mktemp(algo))
        return found[algo]

    return of


def entered_once(stack: list[str]) -> bool:
    """No file is left for another and entered again further down the stack."""
    runs = [path for k, path in enumerate(stack) if k == 0 or stack[k - 1] != path]
    return len(runs) == len(set(runs))


#: (algo, the words in CONTRIBUTING.md before its map, the most files the issue allows)
MAPS = [("custom", "to the first gradient step", 8), ("dqn", "stable-baselines3's DQN, to the first call", 6)]


@pytest.mark.parametrize(("algo", "heading", "most"), MAPS)
def test_the_map_in_contributing_is_the_stack_at_the_first_update(algo, heading, most, first_updates):
    documented = map_in_contributing(heading)
    frames, _ = first_updates(algo)
    assert entered_once(frames), frames
    stack = list(dict.fromkeys(frames))
    assert stack == documented, f"CONTRIBUTING's map ({heading}) says {documented}; the run went {stack}"
    assert len(stack) <= most


@pytest.mark.parametrize("algo", ["custom", "dqn"])
def test_a_one_player_run_loads_no_self_play_and_ours_no_sb3_dqn_before_its_first_update(algo, first_updates):
    """What a run does not use is not on its way: UAVGrid-v0 has no opponent, so nothing of
    agents.twoplayer; our DQN builds SB3's only for the zoo's copy at the end."""
    _, loaded = first_updates(algo)
    assert "agents.session.opponents" in loaded  # the look saw the session's modules
    assert not [name for name in loaded if name.startswith("agents.twoplayer")]
    if algo == "custom":
        assert not [name for name in loaded if name.startswith("agents.sb3")]


#: Run in a fresh process: agents.train's checks with a look at each call prepare_run makes itself.
CALLS_OF_PREPARE_RUN = """
import json, os, sys
from agents.trainer import setup
from agents.trainer import run as trainer

called = []

def look(frame, event, arg):
    if event == "call" and frame.f_back is not None and frame.f_back.f_code is setup.prepare_run.__code__:
        called.append(os.path.relpath(frame.f_code.co_filename, {repo!r}))

def prepare_run_looked_at(*args, **kwargs):
    sys.setprofile(look)
    try:
        return PREPARE_RUN(*args, **kwargs)
    finally:
        sys.setprofile(None)

PREPARE_RUN, trainer.prepare_run = trainer.prepare_run, prepare_run_looked_at
trainer.prepare({argv!r}, make_folder=False)
print("CALLED " + json.dumps([path for path in called if path.startswith(("agents" + os.sep, "ballenvs" + os.sep))]))
"""

#: prepare_run's phases, as CONTRIBUTING's "A run, in order" gives them: one room each.
PHASES = [
    "agents/session/cli.py",  # the flags
    "agents/trainer/sections.py",  # the config section
    "agents/common/configuration/hyperparameters.py",  # self-play's settings, whomever it plays
    "agents/session/opponents.py",  # whom it plays
    "agents/environments/envs.py",  # the env, one made to read its spaces
    "agents/artifacts/models.py",  # what the section asks of them (check_spaces): frames to shift, the memory
    "agents/trainer/setup.py",  # how often it is evaluated: the flags', the section's or the default cadence
    "agents/trainer/modules.py",  # the Learner's own check
]


def calls_of_prepare_run(argv: list[str]) -> list[str]:
    """The files of ours that prepare_run itself calls into, in order, for ``agents.train ARGV``."""
    script = CALLS_OF_PREPARE_RUN.format(repo=str(REPO), argv=argv)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=300)
    lines = [line for line in done.stdout.splitlines() if line.startswith("CALLED ")]
    assert lines, f"prepare_run did not finish:\n{done.stdout}\n{done.stderr}"
    return json.loads(lines[0][len("CALLED ") :])


def test_prepare_run_checks_in_one_pass_a_room_a_phase(tmp_path):
    """Each room prepare_run calls is called in one stretch, in the order CONTRIBUTING gives (a room
    left and called again is a check that went back)."""
    argv = ["--algo", "custom", "--env", "BallSumo-v0", "--opponent", "self", "--env-kwargs", "obs_type=state"]
    called = calls_of_prepare_run([*argv, "--log-dir", str(tmp_path), "--threads", "1", "--hyperparams", "buffer_size=1000"])
    assert entered_once(called), called
    assert list(dict.fromkeys(called)) == PHASES
    assert not list(tmp_path.iterdir()), "checking makes no run folder"


def test_a_one_player_run_checks_no_opponent(tmp_path):
    """UAVGrid-v0 has no opponent: its checks skip whom it plays, and nothing else."""
    called = calls_of_prepare_run(["--algo", "custom", "--env", "UAVGrid-v0", "--log-dir", str(tmp_path), "--threads", "1"])
    assert list(dict.fromkeys(called)) == [phase for phase in PHASES if phase != "agents/session/opponents.py"]
