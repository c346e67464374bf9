"""What the command lines say on standard error: bad input from the user, and notes along the way.

Everything a user can get wrong (a flag, a config file or value, an env option, a model file)
is checked before a run folder exists and raised as :class:`UsageError`: one line on stderr,
exit status 2. Any other exception is a bug and keeps its traceback (exit status 1).

Standard output holds a command's results alone, so that it can be piped (``| tee results.md``):
what the user is told on the way (the device, a resumed step, a setting not applied) is a
:func:`note`, on standard error.
"""

import sys


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class ConfigError(UsageError, ValueError):
    """A config file, section, key or value that cannot be used; the message says which."""


def note(text: str) -> None:
    """Tell the user something along the way, on standard error: not a result of the command."""
    print(text, file=sys.stderr, flush=True)


def refuse_repeats(what: str, names: list[str]) -> None:
    """Names that must each be different (a league's players, a comparison's agents): one named
    twice would be a silent duplicate, or a run skipped."""
    twice = sorted({name for name in names if names.count(name) > 1})
    if twice:
        raise UsageError(f"{what} must differ; named twice: {twice}")
