"""The environments' own commands (``python -m ballenvs.duel.match``, ``ballenvs.play``,
``ballenvs.uav.baselines``) keep the agents' promise without importing them: bad input is one line
on stderr, ``error: ...``, and exit status 2, before anything is played or written."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from typing import NoReturn

#: The most games or episodes a command plays: more would not fit in memory as one batch.
MAX_GAMES = 1_000_000
#: Seeds as the agents take them (numpy takes any non-negative number; torch 64 bits).
MAX_SEED = 2**32 - 1


class CommandError(Exception):
    """Bad input on a command line: its message is the one line the user reads."""


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one line (argparse's own adds a usage block) and exit status 2."""

    def error(self, message: str) -> NoReturn:
        raise CommandError(f"{message} (see {self.prog} --help)")


def bounded(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: a whole number in [low, high], refused naming the range otherwise."""

    def parse(text: str) -> int:
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value} is outside [{low:,}, {high:,}]")
        return value

    return parse


def run(main: Callable[[list[str] | None], object], argv: list[str] | None = None) -> int:
    """``main``'s exit status: 0, or 2 with one line on stderr for bad input."""
    try:
        status = main(argv)
    except CommandError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return status if isinstance(status, int) and not isinstance(status, bool) else 0
