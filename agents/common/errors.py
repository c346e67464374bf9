"""The one kind of error the command lines turn into a line of text: bad input from the user.

Everything a user can get wrong (a flag, a config file or value, an env option, a model file)
is checked before a run folder exists and raised as :class:`UsageError`: one line on stderr,
exit status 2. Any other exception is a bug and keeps its traceback (exit status 1).
"""


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class ConfigError(UsageError, ValueError):
    """A config file, section, key or value that cannot be used; the message says which."""
