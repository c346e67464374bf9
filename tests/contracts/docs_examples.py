"""The code blocks of README.md and the docs site, as the tests run them (tests/contracts/test_docs.py).

- ``python`` blocks run as they are, each in a fresh namespace: a block needs its own imports.
- ``bash`` blocks are commands, one a line (``&&`` chains, ``\\`` continues, ``#`` comments).
  Ours (``python -m agents.X``, ``ballenvs.X``, ``benchmarks``) run through their ``main(argv)``,
  a page's commands in order in one folder (the run one trains, the next evaluates), with their
  budgets cut to a few steps and games (:data:`BUDGETS`). A trailing ``# exits N`` expects exit
  status N. ``pip install -e ".[extra]"`` must name extras the package declares (the tests run
  in that install), ``python -m pytest`` is the command CI itself runs, and other programs
  (tensorboard, mkdocs, the zoo's trainer) must be installed and answer ``--help``.

``python tests/contracts/docs_examples.py PAGE`` runs a page's commands in the current folder and exits 1
naming the first that failed: tests/contracts/test_docs.py runs it in a subprocess per page, so that the
commands' global state (torch threads, the zoo's gymnasium patches) stays out of the tests.
"""

from __future__ import annotations

import importlib
import importlib.metadata
import re
import shlex
import subprocess
import sys
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PAGES = (
    ROOT / "README.md",
    ROOT / "CONTRIBUTING.md",
    ROOT / "benchmarks" / "RESULTS.md",
    *sorted((ROOT / "benchmarks" / "studies").glob("*.md")),
    *sorted((ROOT / "docs").rglob("*.md")),
)
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>[\w-]*)(?P<info>[^\n]*)\n(?P<code>.*?)^(?P=indent)```", re.M | re.S)
#: A block whose title starts so holds commands for several machines: tests/agents/rllib/test_cluster.py
#: runs it on a cluster of two nodes, not here.
CLUSTER_TITLE = 'title="A cluster'
EXPECTED_EXIT = re.compile(r"#\s*exits (\d+)")

#: Per command, the budgets of its flags: ``cut`` replaces a flag's value where the command has
#: the flag, ``set`` gives the flag that value whether it has it or not (a switch: None).
#: Enough to run every path a documented command takes, not to learn.
TRAINER = {
    "cut": {"--eval-freq": "1000", "--eval-episodes": "2"},
    "set": {"--timesteps": "1500", "--no-progress": None},  # the config's budget would be a whole training
}
BUDGETS: dict[str, dict[str, dict[str, str | None]]] = {
    "agents.train": TRAINER,
    "agents.sb3_train": TRAINER,
    "agents.custom_train": TRAINER,
    "agents.evaluate": {"cut": {"--episodes": "2"}},
    # Past learning_starts (5,000) and PQN's rollout (4,096): compare refuses a run that would never update.
    "agents.compare": {
        "cut": {"--eval-freq": "3000", "--seeds": "1"},
        "set": {"--timesteps": "6000", "--eval-episodes": "1", "--score-episodes": "1"},
    },
    "agents.league": {"cut": {"--games": "2"}},
    "agents.record": {"cut": {"--episodes": "3"}},
    "agents.exploit": {"cut": {"--budget": "3000", "--games": "2"}},
    # Above learning_starts (5000): tune refuses a trial that would never learn.
    "agents.tune": {
        "cut": {"--trials": "1", "--workers": "1", "--seeds": "1", "--eval-freq": "3000", "--eval-episodes": "1"},
        "set": {"--timesteps": "6000"},
    },
    "agents.rlzoo": {"cut": {"-n": "50"}},
    "ballenvs.duel.match": {"cut": {"--games": "4"}},
    "ballenvs.uav.baselines": {"cut": {"--episodes": "2"}},
    "benchmarks": {"set": {"--quick": None}},
    "benchmarks.env_throughput": {"set": {"--steps": "200", "--rounds": "1", "--vector-steps": "20"}},
}
#: Modules run in their own process: importing rl_zoo3 patches gymnasium for the whole process.
OWN_PROCESS = ("agents.rlzoo",)
#: Pages whose commands need a module of an extra that pins other versions than the test install's
#: (Ray RLlib pins gymnasium 1.2.2): CI runs them in that extra's install (.ci/run), the tests skip them here.
NEEDS = {"docs/rllib.md": "ray"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    code: str
    info: str = ""  # the rest of the fence's line: a title

    def __str__(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text()
    return [
        Block(page, text.count("\n", 0, m.start()) + 1, m["lang"], textwrap.dedent(m["code"]), m["info"].strip())
        for m in FENCE.finditer(text)
    ]


def commands(block: Block) -> list[tuple[list[str], int]]:
    """A bash block's commands, each with the exit status it is expected to end with."""
    found = []
    for line in block.code.replace("\\\n", " ").splitlines():
        expected = EXPECTED_EXIT.search(line)
        words = shlex.split(line, comments=True)
        chain: list[str] = []
        for word in [*words, "&&"]:
            if word == "&&":
                if chain:
                    found.append((chain, int(expected[1]) if expected else 0))
                chain = []
            else:
                chain.append(word)
    return found


#: A documented run's first update within its budget: a run that would end before it is refused
#: (agents/trainer/setup.py), and the budget's 1,500 steps are below the sections' learning_starts
#: (5,000) and their rollouts (PPO's 8 envs x 512 steps, PQN's 128 x 32).
WITHIN_BUDGET = {"learning_starts": "learning_starts=500", "rollout_steps": "rollout_steps=8"}
#: The algorithm each training command runs without --algo.
DEFAULT_ALGOS = {"agents.train": "dqn", "agents.sb3_train": "dqn", "agents.custom_train": "custom"}


def budgeted(module: str, argv: list[str]) -> list[str]:
    """``argv`` with the module's budgets (:data:`BUDGETS`)."""
    budget, argv = BUDGETS.get(module, {}), list(argv)
    for flag, value in {**budget.get("cut", {}), **budget.get("set", {})}.items():
        if flag in argv:
            if value is not None:
                argv[argv.index(flag) + 1] = value
        elif flag in budget.get("set", {}):
            argv += [flag] if value is None else [flag, value]
    if budget is TRAINER and "--resume" not in argv:
        from agents.common.configuration.registry import ALGORITHMS

        algo = argv[argv.index("--algo") + 1] if "--algo" in argv else DEFAULT_ALGOS[module]
        keys = ALGORITHMS[algo].schema.keys if algo in ALGORITHMS else {}
        within = [pair for key, pair in WITHIN_BUDGET.items() if key in keys]
        if within:  # before the page's own pairs, which win where they name the same key
            at = argv.index("--hyperparams") + 1 if "--hyperparams" in argv else len(argv)
            argv[at:at] = within if "--hyperparams" in argv else ["--hyperparams", *within]
    return argv


def declared_extras() -> set[str]:
    """The extras of the installed package: the install these tests run in."""
    return set(importlib.metadata.metadata("ballenvs").get_all("Provides-Extra") or ())


def run_ours(module: str, argv: list[str]) -> int:
    from agents.session.cli import run_cli

    main = importlib.import_module(module if module != "benchmarks" else "benchmarks.__main__").main
    try:
        return run_cli(main, argv)
    except SystemExit as exit:
        return exit.code if isinstance(exit.code, int) else 1


def run_command(words: list[str]) -> int:
    """Run one documented command (see the module docstring); its exit status."""
    program, *rest = words
    if program == "pip":
        assert rest[:2] == ["install", "-e"] or rest[:1] == ["install"], words
        for extra in re.findall(r"\[([\w,-]+)\]", " ".join(rest)):
            unknown = set(extra.split(",")) - declared_extras()
            assert not unknown, f"pip install names extras the package does not declare: {unknown}"
        return 0
    if program == "python" and rest[:1] == ["-m"]:
        module, argv = rest[1], rest[2:]
        if module == "pytest":
            return 0  # CI's own command
        if module.split(".")[0] in ("agents", "ballenvs", "benchmarks"):
            argv = budgeted(module, argv)
            if module in OWN_PROCESS:
                return subprocess.run([sys.executable, "-m", module, *argv]).returncode
            return run_ours(module, argv)
        return subprocess.run([sys.executable, "-m", module, "--help"], capture_output=True).returncode
    return subprocess.run([program, "--help"], capture_output=True).returncode


def main(page: Path) -> int:
    for block in blocks(page):
        if block.lang != "bash" or block.info.startswith(CLUSTER_TITLE):
            continue
        for words, expected in commands(block):
            print(f"+ {' '.join(words)}  ({block})", flush=True)
            start = time.perf_counter()
            status = run_command(words)
            print(f"  ({time.perf_counter() - start:.1f} s)", flush=True)
            if status != expected:
                print(f"FAILED: {' '.join(words)} exited {status}, expected {expected} ({block})", flush=True)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
