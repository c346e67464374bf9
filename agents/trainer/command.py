"""The trainers' command lines, light enough to answer ``--help`` before torch is imported:
``agents.train`` and its old names with their algorithms preset, each a :class:`Command` whose
description names every algorithm it trains, from the registry."""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

from agents.common.configuration.registry import ALGORITHMS, TRAIN, trained_by
from agents.session.cli import trainer_parser


@dataclass(frozen=True)
class Command:
    """A command line that trains: ``agents.train`` itself, or an alias with its algorithms preset."""

    module: str  # python -m <module>
    purpose: str  # what it trains, before the list of its algorithms
    default_algo: str
    gpu_flags: bool = True  # --amp and --compile (our own agents' options)

    @property
    def algos(self) -> tuple[str, ...]:
        return trained_by(self.module)

    @property
    def description(self) -> str:
        named = ", ".join(f"{ALGORITHMS[name].label} (--algo {name})" for name in self.algos)
        return f"{self.purpose}: {named}."


TRAIN_COMMAND = Command(TRAIN, "Train any registered algorithm on a ballenvs environment", default_algo="dqn")


def command_parser(command: Command) -> argparse.ArgumentParser:
    """The command's flags: the trainers' own, and --amp/--compile where its algorithms take them."""
    parser = trainer_parser(f"python -m {command.module}", command.description, command.algos)
    parser.set_defaults(algo=None)  # the resumed run's, else the command's default
    if command.gpu_flags:
        parser.add_argument("--amp", action="store_true", help="bf16 autocast on CUDA, our agents (not applied on CPU)")
        parser.add_argument(
            "--compile", action="store_true", help="torch.compile the Q-networks on CUDA, our agents (not applied on CPU)"
        )
    return parser


def answer_help(argv: list[str] | None, command: Command) -> None:
    """``--help``, answered from the registry alone: the command lines call this before they import
    the trainer, whose torch takes 2-10 s to import (a cold cache)."""
    if {"-h", "--help"} & set(sys.argv[1:] if argv is None else argv):
        command_parser(command).parse_args(argv)  # prints the help and exits
