"""The promise of every command, fuzzed (Hypothesis): one drawn flag at a time gets a hostile value
(numbers at and past their bounds, NaN, inf, empty, huge, path-like and unicode strings, a file
where a folder goes and the reverse, junk key=value pairs) on a command line that is otherwise a
small valid run. Whatever is drawn: exit 0 or 2, never a traceback; a refusal is one line, and
leaves nothing behind in the folder the command runs in.

The default run draws a few examples a command, the same ones every time; ``BALLENVS_FUZZ_EXAMPLES=N
python -m pytest -m fuzz`` draws N a command, new ones each run (RESULTS, "The fuzzer").
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import io
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agents.session.cli import run_cli

EXAMPLES = int(os.environ.get("BALLENVS_FUZZ_EXAMPLES", "20"))
#: A small valid run of each command, run in a fresh folder; {run} is a finished run of our DQN on
#: BallSumo-v0's state (made once), {file} an existing file, {folder} an existing folder.
COMMANDS: dict[str, list[str]] = {
    "agents.train": ["--env", "UAVGrid-v0", "--algo", "custom", "--timesteps", "32", "--n-envs", "2", "--eval-freq", "0"]
    + ["--save-freq", "0", "--no-progress", "--threads", "1", "--hyperparams", "learning_starts=16", "buffer_size=100"],
    "agents.evaluate": ["{run}", "--episodes", "1", "--threads", "1"],
    "agents.compare": ["--env", "UAVGrid-v0", "--agents", "custom", "--seeds", "1", "--timesteps", "32", "--threads", "1"],
    "agents.league": ["random", "still", "--games", "2", "--env", "BallSumo-v0", "--threads", "1"],
    "agents.record": ["still", "--episodes", "1", "--env-kwargs", "obs_type=state", "--threads", "1"],
    "agents.exploit": ["still", "--search-only", "--games", "2", "--threads", "1"],
    "agents.export_champion": ["{run}", "--out", "champion.npz"],
    "benchmarks.frame_probe": ["--sizes", "36", "--stacks", "1", "--games", "5", "--epochs", "1"],
    "benchmarks.train_throughput": ["--envs", "UAVGrid-v0", "--steps", "1", "--rounds", "1", "--vec-envs", "native"],
    "benchmarks.env_throughput": ["--steps", "10", "--rounds", "1", "--vector-sizes", "2", "--vector-steps", "10"],
    "benchmarks.episode_flatness": ["--episodes", "1", "--anti-episodes", "1", "--save-freq", "100"],
    "benchmarks.naive_vs_batched": ["--calls", "1", "--batch-size", "8"],
    "benchmarks.threads": ["--env", "UAVGrid-v0", "--timesteps", "32"],
    "benchmarks.tune_workers": ["--trials", "1", "--timesteps", "100", "--no-record"],
    "benchmarks.loop_pieces": ["--env", "UAVGrid-v0", "--steps", "16", "--threads", "1"],
    "benchmarks.floor": ["--envs", "UAVGrid-v0", "--threads", "1"],
    "benchmarks.outsiders": ["chaser", "--games", "2"],
    "benchmarks.uav_search": ["--episodes", "1", "--futures", "2", "--horizon", "2"],
    "benchmarks.search_with_network": ["{run}", "--games", "2", "--searches", "model"],
    "benchmarks.eval_curves": ["{run}", "--metric", "eval/win_rate_vs_chaser", "--out", "curves.png"],
    "benchmarks.docs_figures": ["--out", "{folder}", "--timesteps", "6000", "--games", "2", "--no-progress"],
    "benchmarks.rllib_sampling": ["--runners", "1", "--envs", "2", "--steps", "100", "--repeats", "1"],
    "benchmarks.rllib_learners": ["--runners", "1", "--learners", "1", "--iterations", "2", "--n-steps", "32"],
    "benchmarks.silence": ["--only", "ballenvs.uav.baselines", "--limit", "30"],
    "benchmarks.state_head": ["{run}", "--steps", "2", "--envs", "2"],
    "benchmarks.time_to_skill": ["--learners", "custom", "--seeds", "0", "--timesteps", "1000", "--eval-freq", "500"],
    "benchmarks": ["--only", "naive_vs_batched", "--results", "RESULTS.md"],
    "ballenvs.duel.match": ["chaser", "pusher", "--games", "2", "--no-progress"],
    "ballenvs.uav.baselines": ["--episodes", "1"],
    "agents.tune": ["--env", "UAVGrid-v0", "--algo", "custom", "--timesteps", "400", "--eval-freq", "200"]
    + ["--trials", "1", "--log-dir", "tune", "--hyperparams", "learning_starts=100", "buffer_size=500"],
}
#: Where each command's work starts once its input is checked: replaced in the fuzz by a stop
#: (:class:`Checked`). The fuzz is of the checks; a drawn value that passes them must not start hours
#: of work (a million games, 65,536 envs).
WORK: dict[str, list[tuple[str, str]]] = {
    "agents.train": [("agents.trainer.run", "configure")],  # after the run folder, before the envs
    "agents.evaluate": [("agents.evaluate", "evaluate"), ("agents.evaluate", "against_every_builtin")],
    "agents.compare": [("agents.compare", "new_manifest"), ("agents.compare", "write_outputs")],
    "agents.league": [("agents.league", "play_league")],
    "agents.record": [("agents.record", "record_games")],
    "agents.exploit": [("agents.exploit", "search_exploitation"), ("agents.exploit", "train_best_response")],
    "agents.export_champion": [],
    "benchmarks.frame_probe": [("benchmarks.frame_probe", "record_games")],
    "benchmarks.train_throughput": [("benchmarks.train_throughput", "run")],
    "benchmarks.env_throughput": [("benchmarks.env_throughput", "run")],
    "benchmarks.episode_flatness": [("benchmarks.episode_flatness", "run")],
    "benchmarks.naive_vs_batched": [("benchmarks.naive_vs_batched", "run")],
    "benchmarks.threads": [("benchmarks.threads", "timed_runs")],
    "benchmarks.tune_workers": [("benchmarks.tune_workers", "timed")],
    "benchmarks.loop_pieces": [("benchmarks.loop_pieces", "pieces")],
    "benchmarks.floor": [("benchmarks.floor", "dqn_floor"), ("benchmarks.floor", "pqn_floor")],
    "benchmarks.outsiders": [("benchmarks.outsiders", "play_pairs")],
    "benchmarks.uav_search": [("benchmarks.uav_search", "played_returns")],
    "benchmarks.search_with_network": [("benchmarks.search_with_network", "make_search")],
    "benchmarks.eval_curves": [],  # it reads the runs' progress.csv and draws: seconds
    "benchmarks.docs_figures": [("agents.compare", "main")],
    "benchmarks.rllib_sampling": [("benchmarks.rllib_sampling", "measure")],
    "benchmarks.rllib_learners": [("benchmarks.rllib_learners", "two_nodes")],
    "benchmarks.silence": [("benchmarks.silence", "silence")],
    "benchmarks.state_head": [("benchmarks.state_head", "read_state")],
    "benchmarks.time_to_skill": [("benchmarks.time_to_skill", "train_once")],
    "agents.tune": [("agents.tune", "run_workers")],
    "benchmarks": [("benchmarks.__main__", "measure")],
    "ballenvs.duel.match": [("ballenvs.duel.match", name) for name in ("play_matches", "play_pairs", "round_robin")],
    "ballenvs.uav.baselines": [("ballenvs.uav.baselines", "episode_returns")],
}
#: Flags left out: they reach services (Weights & Biases, a database) rather than checks of ours.
SKIPPED = {"--track", "--wandb-project", "--wandb-entity", "--storage", "--device", "--help"}

NUMBERS = ["0", "-1", "1", "2", "-0", "3.5", "1e20", "1e400", "nan", "NaN", "inf", "-inf", str(2**63), str(2**64 + 1)]
NUMBERS += [str(2**53 + 1), "0x10", "1_000", "", " ", "٣", "1e-400"]
PATHS = ["{file}", "{folder}", "{file}/under", "/", ".", "..", "", "nowhere/deeper", "a" * 300]
WORDS = ["", " ", "-", "--", "none", "None", "true", "ü", "🙂", "a b", "'", '"', "\\", "$HOME", "%s", "{}"]
PAIRS = ["=", "x=", "=1", "gamma=nan", "gamma=inf", "batch_size=-1", "learning_rate=lin_", "policy_kwargs=dict(",
         "obs_type=üñï", "opponent=self", "n_ues=10**9", "policy_kwargs=dict(net_arch=[10**9])", "a"]  # fmt: skip


def hostile(action: argparse.Action) -> st.SearchStrategy[list[str]]:
    """Hostile values for one flag: what it takes, past its bounds, and what it does not take."""
    anything = st.sampled_from(NUMBERS + PATHS + WORDS)
    if action.nargs in ("*", "+") or isinstance(action.nargs, int):
        return st.lists(st.sampled_from(PAIRS + NUMBERS + WORDS), min_size=0, max_size=3)
    # No NUL: a command line cannot carry one (argv holds C strings).
    texts = st.text(alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="\x00"), max_size=12)
    return st.one_of(anything, texts, st.integers(-(2**70), 2**70).map(str)).map(lambda value: [value])


class _Captured(Exception):
    pass


class Checked(Exception):
    """The command's checks passed and its work would start here."""


def stop_here(*args: Any, **kwargs: Any) -> Any:
    raise Checked


def parser_of(main: Callable[[list[str]], Any], argv: list[str]) -> argparse.ArgumentParser:
    """The parser ``main`` builds, caught as it parses."""
    caught: list[argparse.ArgumentParser] = []

    def capture(self: argparse.ArgumentParser, args: Any = None, namespace: Any = None) -> Any:
        caught.append(self)
        raise _Captured

    original = argparse.ArgumentParser.parse_args
    argparse.ArgumentParser.parse_args = capture  # type: ignore[method-assign]
    try:
        main(argv)
    except _Captured:
        pass
    finally:
        argparse.ArgumentParser.parse_args = original  # type: ignore[method-assign]
    return caught[0]


def main_of(command: str) -> Callable[[list[str]], Any]:
    """``python -m COMMAND``'s main (a package's is in its __main__)."""
    module = importlib.import_module(command)
    return getattr(module, "main", None) or importlib.import_module(f"{command}.__main__").main


def fuzzed_flags(command: str) -> list[argparse.Action]:
    parser = parser_of(main_of(command), [])
    return [
        action
        for action in parser._actions
        if action.option_strings
        and action.nargs != 0  # switches take no value
        and not set(action.option_strings) & SKIPPED
    ]


@pytest.fixture(scope="session")
def run(tmp_path_factory):
    from tests.helpers import shared_training

    argv = ["--env", "BallSumo-v0", "--algo", "custom", "--timesteps", "200", "--n-envs", "2", "--eval-freq", "100"]
    argv += ["--eval-episodes", "1"]  # evaluations: progress.csv has a curve for benchmarks.eval_curves
    argv += ["--no-progress", "--hyperparams", "learning_starts=32", "buffer_size=100"]
    main = importlib.import_module("agents.train").main
    return shared_training(tmp_path_factory, "fuzz_run", main, argv, "custom/BallSumo-v0_1")


def files_under(folder: Path) -> set[Path]:
    return {path for path in folder.rglob("*")}


@pytest.mark.fuzz
@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_a_hostile_value_for_any_flag_is_run_or_refused_in_one_line_leaving_nothing(command, run, monkeypatch):
    for module, name in WORK[command]:
        monkeypatch.setattr(importlib.import_module(module), name, stop_here)
    main = main_of(command)
    flags = fuzzed_flags(command)
    codes: list[int] = []  # each invocation's exit status, for the record (-s shows the counts)

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=EXAMPLES <= 20)
    @given(data=st.data())
    def invoke(data: st.DataObject) -> None:
        action = data.draw(st.sampled_from(flags), label="flag")
        values = data.draw(hostile(action), label="values")
        with tempfile.TemporaryDirectory() as scratch:
            here = Path(scratch)
            (here / "a_file").write_text("x")
            (here / "a_folder").mkdir()
            fill = {"{run}": str(run), "{file}": str(here / "a_file"), "{folder}": str(here / "a_folder")}

            def filled(text: str) -> str:
                for key, path in fill.items():
                    text = text.replace(key, path)
                return text

            argv = [filled(arg) for arg in COMMANDS[command]]
            flag = action.option_strings[-1]
            argv += [flag, *(filled(value) for value in values)]
            before = files_under(here)
            stderr = io.StringIO()
            cwd = os.getcwd()
            os.chdir(here)
            try:
                with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                    code = run_cli(main, argv)
            except Checked:
                code = 0
            finally:
                os.chdir(cwd)
            said = stderr.getvalue()
            codes.append(code)
            assert code in (0, 2), f"python -m {command} {argv}: exit {code}\n{said}"
            assert "Traceback" not in said, f"python -m {command} {argv}\n{said}"
            if code == 2:
                lines = said.strip().splitlines()
                assert len(lines) == 1 and lines[0].startswith("error: "), f"python -m {command} {argv}\n{said}"
                assert files_under(here) == before, (
                    f"python -m {command} {argv} refused, and left {files_under(here) - before}"
                )

    invoke()
    print(f"python -m {command}: {len(codes)} invocations, {codes.count(2)} refused, {codes.count(0)} checked and run")


def test_a_name_too_long_for_the_file_system_is_bad_input_and_other_os_errors_are_bugs(capsys):
    import errno

    def too_long(argv):
        raise OSError(errno.ENAMETOOLONG, "File name too long", "a" * 300)

    assert run_cli(too_long, []) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: 'aaaa") and err.endswith("a name too long for the file system") and "\n" not in err

    def broken_disk(argv):
        raise OSError(errno.EIO, "Input/output error")

    with pytest.raises(OSError, match="Input/output error"):
        run_cli(broken_disk, [])


#: The learners from rollouts (sizes they allocate as they start: a rollout of steps x envs x observation),
#: a small valid run each, fuzzed key by key; stopped once its rollout is allocated and its first step is stored.
KEYED: dict[str, list[str]] = {
    algo: ["--algo", algo, *env, "--n-envs", "2", "--timesteps", "64", "--eval-freq", "0", "--save-freq", "0"]
    + ["--no-progress", "--threads", "1", "--hyperparams", "rollout_steps=8", "n_minibatches=2"]
    for algo, env in (("ppo", ["--env", "BallSumo-v0"]), ("pqn", ["--env", "UAVGrid-v0"]))
}


def key_values(key: Any) -> st.SearchStrategy[str]:
    """Values for one key: at, just past and far past its bounds, and what it does not take."""
    edges: list[float] = []
    for bound in (key.low, key.high):
        if bound is not None:
            edges += [bound, bound - 1, bound + 1, bound * 10, bound - 1e-9, bound + 1e-9]
    words = ["10**12", "4096", "1000000", "100000000000", "lin_3e-4", "lin_nan", "lin_-1", "true", "False", "dict()"]
    drawn = [repr(edge) for edge in edges] + [value for value in NUMBERS + WORDS if "=" not in value] + words
    return st.one_of(st.sampled_from(drawn), st.integers(-(2**70), 2**70).map(str), st.floats().map(repr))


@pytest.mark.fuzz
@pytest.mark.parametrize("algo", sorted(KEYED))
def test_every_key_of_a_learner_from_rollouts_in_and_out_of_range_is_run_or_refused_in_one_line(algo, monkeypatch):
    from agents.algorithms import rollouts
    from agents.common.configuration.registry import ALGORITHMS

    monkeypatch.setattr(rollouts.Rollout, "store_observation", stop_here)
    main = importlib.import_module("agents.train").main
    keys = ALGORITHMS[algo].schema.keys

    @settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=EXAMPLES <= 20)
    @given(data=st.data())
    def invoke(data: st.DataObject) -> None:
        name = data.draw(st.sampled_from(sorted(keys)), label="key")
        value = data.draw(key_values(keys[name]), label="value")
        with tempfile.TemporaryDirectory() as scratch:
            argv = [*KEYED[algo], f"{name}={value}", "--log-dir", scratch]
            stderr = io.StringIO()
            try:
                with contextlib.redirect_stderr(stderr), contextlib.redirect_stdout(io.StringIO()):
                    code = run_cli(main, argv)
            except Checked:
                code = 0
            said = stderr.getvalue()
            assert code in (0, 2) and "Traceback" not in said, f"python -m agents.train {argv}: exit {code}\n{said}"
            if code == 2:
                lines = said.strip().splitlines()
                assert len(lines) == 1 and lines[0].startswith("error: "), f"python -m agents.train {argv}\n{said}"
                assert not any(Path(scratch).iterdir()), f"python -m agents.train {argv} refused, and left a folder"

    invoke()
