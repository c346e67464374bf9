"""Hostile files for the readers of models and checkpoints (Hypothesis): a valid file (of ours, of
stable-baselines3, an RLlib state, a model in its run folder as every tool loads it) cut short,
with bytes flipped or junk added, or made from drawn contents, with payloads planted. Whatever is
drawn: the reader returns plain data or refuses in one line with its own error, never another
exception, and no payload runs. ``BALLENVS_FUZZ_EXAMPLES=N`` draws N a reader (RESULTS, "The fuzzer")."""

from __future__ import annotations

import io
import os
import pickle
import tempfile
from pathlib import Path

import numpy as np
import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.common.errors import UsageError
from agents.common.readers import torch_weights
from ballenvs.npz import NpzError, read_weights

pytestmark = pytest.mark.fuzz
EXAMPLES = int(os.environ.get("BALLENVS_FUZZ_EXAMPLES", "60"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=EXAMPLES <= 60)


class Payload:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _npz_bytes() -> bytes:
    rng = np.random.default_rng(0)
    buffer = io.BytesIO()
    np.savez(buffer, weight_0=rng.normal(size=(8, 11)).astype(np.float32), bias_0=np.zeros(8, np.float32), layers=np.array(1))
    return buffer.getvalue()


def _pt_bytes() -> bytes:
    buffer = io.BytesIO()
    torch.save({"q": {"weight": torch.zeros(3, 4)}, "steps": 10}, buffer)
    return buffer.getvalue()


def mutated(original: bytes) -> st.SearchStrategy[bytes]:
    """The file cut short, some bytes replaced, junk appended, or all three."""
    size = len(original)

    def apply(cut: int, flips: list[tuple[int, int]], tail: bytes) -> bytes:
        data = bytearray(original[:cut])
        for position, value in flips:
            if data:
                data[position % len(data)] = value
        return bytes(data) + tail

    return st.builds(
        apply,
        st.integers(0, size),
        st.lists(st.tuples(st.integers(0, size), st.integers(0, 255)), max_size=8),
        st.binary(max_size=64),
    )


def _one_line(error: Exception) -> None:
    assert "\n" not in str(error), str(error)


@FUZZ
@given(data=mutated(_npz_bytes()))
def test_a_damaged_model_file_is_read_as_numbers_or_refused_in_one_line(data):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "model.npz"
        path.write_bytes(data)
        try:
            arrays = read_weights(path, "model")
        except NpzError as error:
            _one_line(error)
            return
    for array in arrays.values():
        assert array.dtype.kind in "biuf" and (array.dtype.kind != "f" or np.isfinite(array).all())


@FUZZ
@given(data=mutated(_pt_bytes()))
def test_a_damaged_weights_file_is_read_as_tensors_or_refused_in_one_line(data):
    try:
        torch_weights(data, "checkpoint")
    except UsageError as error:
        _one_line(error)


PROGRESS = b"time/total_timesteps,time/time_elapsed,eval/win_rate\n100,1.5,\n200,3.0,0.5\n300,4.5,0.9\n"


@FUZZ
@given(data=mutated(PROGRESS))
def test_a_damaged_progress_file_is_drawn_or_refused_in_one_line(data):
    """benchmarks.eval_curves and agents.compare --from-runs read a run's progress.csv: bytes that
    are not UTF-8, a broken quote, a cell that is not a finite number, a missing column."""
    from benchmarks.eval_curves import read_curve

    with tempfile.TemporaryDirectory() as folder:
        (Path(folder) / "progress.csv").write_bytes(data)
        try:
            steps, wins = read_curve(Path(folder), "eval/win_rate")
        except UsageError as error:
            _one_line(error)
            return
    assert np.isfinite(steps).all() and np.isfinite(wins).all()


@FUZZ
@given(data=mutated(pickle.dumps(Payload(Path("/nonexistent/never")))))
def test_a_pickle_where_weights_belong_never_runs(data, tmp_path_factory):
    marker = tmp_path_factory.mktemp("marker") / "ran"
    data = data.replace(b"/nonexistent/never", str(marker).encode())
    try:
        torch_weights(data, "checkpoint")
    except UsageError as error:
        _one_line(error)
    assert not marker.exists()


# -- RLlib checkpoints (msgpack states), checked without Ray -----------------------------------------

#: What a msgpack state may hold, msgpack-numpy's array marks among it (an object array: a pickle).
LEAVES = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**63 - 1), st.floats(), st.text(max_size=8), st.binary(max_size=8)
)
ARRAY_MARKS = st.fixed_dictionaries(
    {
        b"nd": st.booleans(),
        b"kind": st.sampled_from([b"", b"f", b"O", b"V", "O"]),
        # plain numbers, objects, records with an object field (pointers read from the file), raw voids, complex
        b"type": st.sampled_from(["<f4", "<i8", "|O", [["a", "|O"]], [["a", "<f4"]], "<V8", "<c8"]),
        b"shape": st.sampled_from([[1], [2, 2], [10**6], [-1], []]),
        b"data": st.binary(max_size=16),
    }
)
STATES = st.recursive(
    st.one_of(LEAVES, ARRAY_MARKS),
    lambda children: st.one_of(st.lists(children, max_size=4), st.dictionaries(st.text(max_size=6), children, max_size=4)),
    max_leaves=20,
)


def _unsafe_marks(value) -> bool:
    """Whether msgpack-numpy would build anything but plain numbers that fill their shape from ``value``."""
    if isinstance(value, dict):
        if b"nd" in value:
            dtype, shape = value.get(b"type"), value.get(b"shape", [])
            plain = value.get(b"kind", b"") == b"" and dtype in ("<f4", "<i8")
            filled = plain and all(n >= 0 for n in shape) and np.prod(shape) * np.dtype(dtype).itemsize == len(value[b"data"])
            return not filled
        return any(_unsafe_marks(v) for v in value.values())
    return isinstance(value, list) and any(_unsafe_marks(v) for v in value)


@FUZZ
@given(state=STATES, garbage=st.one_of(st.none(), st.binary(max_size=32)))
def test_a_drawn_rllib_state_is_refused_where_it_would_unpickle_and_never_runs(state, garbage, tmp_path_factory):
    msgpack = pytest.importorskip("msgpack")
    from agents.rllib.checkpoint_check import check_checkpoint

    folder = tmp_path_factory.mktemp("checkpoint")
    marker = folder.parent / f"{folder.name}-ran"
    module = folder / "learner_group" / "learner" / "rl_module" / "default_policy"
    module.mkdir(parents=True)
    learner = folder / "learner_group" / "learner"
    states = [(folder, "algorithm_state"), (folder / "learner_group", "state"), (learner, "state")]
    for place, stem in [*states, (learner / "rl_module", "module_state"), (module, "module_state")]:
        (place / "metadata.json").write_text("{}")
        (place / f"{stem}.msgpack").write_bytes(msgpack.packb({"ok": 1}))
    planted = {b"nd": True, b"kind": b"O", b"type": "|O", b"shape": [1], b"data": pickle.dumps(Payload(marker))}
    state_file = module / "module_state.msgpack"
    state_file.write_bytes(msgpack.packb({"state": state, "payload": planted}, use_bin_type=True))
    with pytest.raises(UsageError) as refusal:
        check_checkpoint(folder, ("default_policy",))
    _one_line(refusal.value)
    for contents in (msgpack.packb({"state": state}, use_bin_type=True), garbage):
        if contents is None:
            continue
        state_file.write_bytes(contents)
        try:
            check_checkpoint(folder, ("default_policy",))
            assert contents is garbage or not _unsafe_marks(state), "an array of objects, records or a lying shape got through"
        except UsageError as error:
            _one_line(error)
    assert not marker.exists()


# -- every model a tool plays, through the one loader (evaluate, league, exploit, record, the teachers) --


@pytest.fixture(scope="session")
def small_runs(tmp_path_factory):
    """A finished run of our DQN (.pt) and of stable-baselines3's (.zip) on UAVGrid-v0."""
    from agents import train
    from agents.session.cli import run_cli
    from tests.helpers import shared_run

    argv = ["--env", "UAVGrid-v0", "--n-envs", "2", "--timesteps", "100", "--eval-freq", "0", "--no-progress"]
    argv += ["--threads", "1", "--hyperparams", "learning_starts=50", "buffer_size=200"]

    def make(log_dir):
        for algo in ("custom", "dqn"):
            assert run_cli(train.main, ["--algo", algo, *argv, "--log-dir", str(log_dir)]) == 0
        return log_dir

    log_dir = shared_run(tmp_path_factory, "small_runs", argv, make)
    return {algo: log_dir / algo / "UAVGrid-v0_1" for algo in ("custom", "dqn")}


@FUZZ
@given(kind=st.sampled_from(["custom", "dqn"]), drawn=st.data())
def test_a_damaged_model_in_its_run_folder_plays_or_is_refused_in_one_line(small_runs, kind, drawn, tmp_path_factory):
    import shutil

    from agents.artifacts.models import load_run_model

    run = tmp_path_factory.mktemp("run") / "run"
    shutil.copytree(small_runs[kind], run)
    model = next(run.glob("final_model.*"))
    model.write_bytes(drawn.draw(mutated(model.read_bytes())))
    try:
        load_run_model(model, run, "cpu")
    except UsageError as error:
        _one_line(error)


# -- the resume state of every algorithm of ours ------------------------------------------------------

#: A short self-play run of each of our algorithms on BallSumo-v0's state: its checkpoint holds the
#: agent's runtime state, the games in progress and the pool's. The fine-tuners and kickstart start from
#: the custom run's model (``STARTED``): the fine-tuners' checkpoints hold the start, its level and the
#: pull besides.
STATE_STUDENT = ["--env-kwargs", "obs_type=state", "subpixel=false", "--hyperparams", "policy=MlpPolicy", "frame_stack=1"]
STATE_STUDENT += ["learning_starts=32", "buffer_size=200", "batch_size=16"]
RESUMED = {
    "custom": ["--algo", "custom", "--hyperparams", "learning_starts=32", "buffer_size=200", "batch_size=16"],
    "pqn": ["--algo", "pqn", "--hyperparams", "rollout_steps=8", "n_minibatches=2"],
    "ppo": ["--algo", "ppo", "--hyperparams", "rollout_steps=8", "n_minibatches=2", "n_epochs=1"],
    "finetune": ["--algo", "finetune", "--hyperparams", "learning_starts=32", "buffer_size=200", "batch_size=16"],
    "ppo_from_a_start": ["--algo", "ppo", "--hyperparams", "rollout_steps=8", "n_minibatches=2", "n_epochs=1"],
    # The teachers' learners, on the state here (their sections read sub-pixel frames): a student of
    # pusher, and DQN kickstarted from the custom run.
    "distill": ["--algo", "distill", "--teacher", "pusher", *STATE_STUDENT, "policy_kwargs=dict(net_arch=[64])"],
    "kickstart": ["--algo", "kickstart", *STATE_STUDENT, "augment_shift=0", "policy_kwargs=dict(net_arch=[256, 256])"],
}
START = "start_from={custom}"
STARTED = ("finetune", "ppo_from_a_start", "kickstart")
WARMED = ("finetune", "ppo_from_a_start")
#: The fine-tuners (WARMED) evaluate their start, then every 48 steps (the pull weighed on each), and their
#: critic warms up for 32 steps: their checkpoints hold every part of the warm start's state.
WARM_START = ["calibration_steps=32", "--eval-freq", "48", "--eval-episodes", "2"]
POOL = "self_play=dict(scripted='chaser,pusher', scripted_share=0.5, snapshot_steps=64, swap_steps=32)"


@pytest.fixture(scope="session")
def resumable_runs(tmp_path_factory):
    from agents import train
    from agents.session.cli import run_cli
    from tests.helpers import shared_run

    base = ["--env", "BallSumo-v0", "--env-kwargs", "obs_type=state", "--opponent", "self", "--n-envs", "4"]
    base += ["--timesteps", "96", "--save-freq", "0", "--no-progress", "--threads", "1"]

    def make(log_dir):
        runs = {}
        for name, keys in RESUMED.items():  # the custom run first: the fine-tuners' start
            start = [START.format(custom=runs["custom"] / "final_model.pt")] if name in STARTED else []
            start += WARM_START if name in WARMED else ["--eval-freq", "0"]
            folder = log_dir / name
            assert run_cli(train.main, [*base, "--log-dir", str(folder), *keys, POOL, *start]) == 0
            runs[name] = next(folder.glob("*/BallSumo-v0_1"))
        return log_dir

    key = [*base, POOL, *WARM_START, *(word for keys in RESUMED.values() for word in keys)]
    log_dir = shared_run(tmp_path_factory, "resumable_runs", key, make)
    return {name: next((log_dir / name).glob("*/BallSumo-v0_1")) for name in RESUMED}


def _leaves(value, path=()):
    """Every leaf of a checkpoint (tensors and plain values), with its path of keys."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, (*path, key))
    elif isinstance(value, list):  # a tuple (a rollout's ended games) is a leaf: replaced whole
        for k, item in enumerate(value):
            yield from _leaves(item, (*path, k))
    else:
        yield path, value


#: What a tampered leaf becomes: out-of-range numbers, other types, tensors of NaN or of another shape.
HOSTILE_LEAVES = st.sampled_from(
    [float("nan"), float("inf"), -1, 10**30, 1e300, "nan", None, [], {}, True, "x" * 100, "nan-tensor", "wrong-shape"]
)


def _replaced(leaf, hostile):
    if hostile == "nan-tensor":
        return torch.full_like(leaf, float("nan")) if isinstance(leaf, torch.Tensor) and leaf.is_floating_point() else hostile
    if hostile == "wrong-shape":
        return torch.zeros(3, 5, 7) if isinstance(leaf, torch.Tensor) else hostile
    return hostile


def _resumes_or_is_refused_in_one_line(run: Path, out: Path, what: str) -> None:
    """``agents.train --resume RUN`` goes on, or is one line and exit 2 with no run folder in ``out``."""
    import contextlib

    from agents import train
    from agents.session.cli import run_cli

    stderr = io.StringIO()
    argv = ["--resume", str(run), "--timesteps", "16", "--log-dir", str(out), "--no-progress", "--threads", "1"]
    with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
        code = run_cli(train.main, argv)
    said = stderr.getvalue()
    assert code in (0, 2), f"{what}: exit {code}\n{said[-3000:]}"
    if code == 2:
        assert said.strip().startswith("error: ") and "\n" not in said.strip(), f"{what}: {said}"
        assert not out.exists(), f"{what}: refused, and left {out}"


@settings(
    max_examples=max(EXAMPLES // 6, 6), deadline=None, suppress_health_check=list(HealthCheck), derandomize=EXAMPLES <= 60
)
@given(algo=st.sampled_from(sorted(RESUMED)), drawn=st.data())
def test_a_tampered_resume_state_resumes_or_is_refused_in_one_line_leaving_no_folder(resumable_runs, algo, drawn):
    """Any one leaf of a checkpoint (its agent, its runtime state, its games, its pool) made hostile:
    the resume goes on or is one line, exit 2, with no new run folder; never a traceback."""
    import shutil

    with tempfile.TemporaryDirectory() as scratch:
        run = Path(scratch) / "run" / resumable_runs[algo].parent.name / "BallSumo-v0_1"
        shutil.copytree(resumable_runs[algo], run)
        model = run / "final_model.pt"
        state = torch.load(model, weights_only=True)
        leaves = [(path, leaf) for path, leaf in _leaves({"agent": state["agent"], "run_state": state["run_state"]})]
        path, leaf = drawn.draw(st.sampled_from(leaves), label="leaf")
        hostile = _replaced(leaf, drawn.draw(HOSTILE_LEAVES, label="value"))
        holder = state
        for key in path[:-1]:
            holder = holder[key]
        holder[path[-1]] = hostile
        torch.save(state, model)
        _resumes_or_is_refused_in_one_line(run, Path(scratch) / "out", f"{algo} {path} = {hostile!r:.60}")


@settings(
    max_examples=max(EXAMPLES // 6, 6), deadline=None, suppress_health_check=list(HealthCheck), derandomize=EXAMPLES <= 60
)
@given(drawn=st.data())
def test_a_damaged_sb3_model_resumes_or_is_refused_in_one_line_leaving_no_folder(small_runs, drawn):
    """stable-baselines3's DQN resumed from a damaged ``.zip`` (cut short, bytes replaced, junk
    appended): the resume goes on or is one line, exit 2, with no new run folder."""
    import shutil

    with tempfile.TemporaryDirectory() as scratch:
        run = Path(scratch) / "run" / "dqn" / "UAVGrid-v0_1"
        shutil.copytree(small_runs["dqn"], run)
        model = run / "final_model.zip"
        model.write_bytes(drawn.draw(mutated(model.read_bytes())))
        _resumes_or_is_refused_in_one_line(run, Path(scratch) / "out", "a damaged .zip")
