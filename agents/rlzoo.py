"""Run an RL Baselines3 Zoo command on our envs and run folders, with ballenvs' ids registered.

    python -m agents.rlzoo enjoy --algo dqn --env BallDuel-v0 -f runs --exp-id 1
    python -m agents.rlzoo record_video --algo dqn --env BallDuel-v0 -f runs --exp-id 1 -n 1000
    python -m agents.rlzoo plots.all_plots -a dqn -e BallDuel-v0 -f runs
    python -m agents.rlzoo push_to_hub --algo dqn --env BallDuel-v0 -f runs --repo-name NAME -orga USER -m MESSAGE

The zoo looks an env id up in gymnasium's registry before it makes the env; only ``enjoy`` and
``train`` take ``--gym-packages ballenvs`` to fill it, so this imports ballenvs first and then
runs ``rl_zoo3.<command>`` exactly as ``python -m rl_zoo3.<command>`` would, with the rest of
the arguments. Our DQN's runs hold their zoo folder in ``RUN/zoo`` (``-f RUN/zoo --exp-id 1``).
"""

from __future__ import annotations

import itertools
import runpy
import sys
from pathlib import Path

import ballenvs  # registers the ids the zoo will look up
from agents.common.errors import UsageError
from agents.session.cli import run_cli

COMMANDS = ("enjoy", "record_video", "push_to_hub", "plots.all_plots", "plots.plot_train", "train")


def _mend_push_to_hub() -> None:
    """rl_zoo3 2.9's push_to_hub imports ``generate_metadata`` from huggingface_sb3, which its own
    dependency (sb3-team-hf-integration 3.2) renamed ``_generate_metadata`` and made return a
    ModelCardData: without this, ``python -m rl_zoo3.push_to_hub`` fails on import whatever the run."""
    import importlib

    # The package's push_to_hub function hides its module of the same name: fetch the module.
    hub = importlib.import_module("huggingface_sb3.push_to_hub")

    if not hasattr(hub, "generate_metadata") and hasattr(hub, "_generate_metadata"):

        def generate_metadata(*args: object) -> dict:
            card = hub._generate_metadata(*args)
            return card.to_dict() if hasattr(card, "to_dict") else card

        setattr(hub, "generate_metadata", generate_metadata)  # noqa: B010  (a module's attribute the stubs do not know)


def check_zoo_names(rest: list[str]) -> None:
    """The algorithm and env a zoo command names, in one line each (the zoo prints its whole usage
    for an unknown algorithm, and fails on an unknown env with an AssertionError)."""
    import gymnasium as gym
    from rl_zoo3.utils import ALGOS

    for flags, valid in ((("--algo", "-a"), tuple(ALGOS)), (("--env", "-e"), tuple(gym.registry))):
        for flag in (flag for flag in flags if flag in rest):
            values = itertools.takewhile(lambda value: not value.startswith("-"), rest[rest.index(flag) + 1 :])
            for value in values:  # the plots take several
                if value not in valid:
                    shown = ", ".join(ballenvs.ENV_IDS) + ", ..." if flag in ("--env", "-e") else ", ".join(valid)
                    raise UsageError(f"{flag} {value!r}: unknown to the RL Zoo here; valid: {shown}")


def main(argv: list[str] | None = None) -> None:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in COMMANDS:
        given = repr(argv[0]) if argv else "none"
        raise UsageError(f"an RL Zoo command first ({', '.join(COMMANDS)}), got {given}")
    command, rest = argv[0], argv[1:]
    for flag in ("-f", "--folder"):  # the zoo asserts it exists, a traceback for a mistyped path
        if flag in rest[:-1] and not Path(rest[rest.index(flag) + 1]).is_dir():
            raise UsageError(f"{flag} {rest[rest.index(flag) + 1]!r}: no such folder (the log folder the zoo reads runs from)")
    check_zoo_names(rest)
    if command == "push_to_hub":
        _mend_push_to_hub()
    sys.argv = [f"rl_zoo3.{command}", *rest]
    runpy.run_module(f"rl_zoo3.{command}", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    sys.exit(run_cli(main))
