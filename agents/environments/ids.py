"""The env ids the commands take: ballenvs' own (an old name is refused naming the new), and
which of them are two-player games."""

from __future__ import annotations

import ballenvs
from agents.common.errors import UsageError
from ballenvs.reference import reference_for

#: The vector envs a trainer steps its games in (--vec-env): ours, then stable-baselines3's two.
VEC_ENVS = ("native", "dummy", "subproc")


def check_env_id(env_id: str) -> None:
    if env_id in ballenvs.RENAMED_IDS:
        raise UsageError(f"{env_id} is now called {ballenvs.RENAMED_IDS[env_id]} (the same game); use that id")
    if env_id not in ballenvs.ENV_IDS:
        raise UsageError(f"unknown env {env_id!r}; valid: {', '.join(ballenvs.ENV_IDS)}")


def two_player_ids() -> tuple[str, ...]:
    """The env ids whose games have two sides (an arena: built-in players, matches)."""
    return tuple(env_id for env_id in ballenvs.ENV_IDS if reference_for(env_id).arena is not None)


def check_two_player_env(env_id: str) -> None:
    """An env id whose game has two sides."""
    check_env_id(env_id)
    if env_id not in two_player_ids():
        raise UsageError(f"{env_id} is a one-player game; two-player envs: {', '.join(two_player_ids())}")
