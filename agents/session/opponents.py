"""Whom a run trains against, checked before its run folder exists: one of the game's built-in
players, or itself (self-play), whose scripted players are checked here too. A run with no opponent
(a one-player game) never comes here."""

from __future__ import annotations

from pathlib import Path

from agents.artifacts.models import find_model
from agents.artifacts.runs import read_config
from agents.common.configuration.hyperparameters import SelfPlay
from agents.common.errors import UsageError
from agents.environments.ids import two_player_ids
from ballenvs.reference import Reference, reference_for

#: The name in ``self_play``'s ``scripted`` list of the game's search exploiter (a main exploiter
#: in AlphaStar's terms: it plays the learner alone, planning against its current network).
EXPLOITER = "exploiter"


def check_players(env_id: str, opponent: str, settings: SelfPlay) -> SelfPlay | None:
    """``--opponent``: one of the env's built-in players, or self; an env without an opponent takes
    none. For self, the section's ``self_play`` settings (already checked as values:
    :meth:`SelfPlay.from_config`), returned, and their scripted players: built-in players of the
    game, its search exploiter, or frozen models of a two-player game (a model file or a run folder:
    PSRO's best responses in the pool); and the players its evaluations play beside the built-ins."""
    reference = reference_for(env_id)
    players = reference.players
    if not players:
        what = "replace" if opponent == "self" else "choose"
        raise UsageError(f"--opponent {'self' if opponent == 'self' else repr(opponent)}: {env_id} has no opponent to {what}")
    if opponent != "self" and not known(reference, opponent, "--opponent"):
        raise UsageError(f"unknown opponent {opponent!r} for {env_id}; valid: {', '.join(players)}, self")
    if opponent != "self":
        return None
    if not settings.scripted_players:
        raise UsageError(f"self_play scripted={settings.scripted!r}: name at least one player")
    scripted = f"self_play scripted={settings.scripted!r}"
    scripted_models = [
        name for name in settings.scripted_players if name != EXPLOITER and not known(reference, name, scripted)
    ]
    check_models(env_id, "scripted", settings.scripted, scripted_models)
    evaluated = f"self_play evaluated={settings.evaluated!r}"
    check_models(
        env_id, "evaluated", settings.evaluated, [n for n in settings.evaluated_players if not known(reference, n, evaluated)]
    )
    return settings


def known(reference: Reference, name: str, where: str) -> bool:
    """Whether ``name`` is one of the game's own players (:meth:`Reference.knows`); one of its forms
    with bad values is refused in one line, saying ``where`` it was given."""
    try:
        return reference.knows(name)
    except ValueError as error:
        raise UsageError(f"{where}: {error}") from None


def check_models(env_id: str, key: str, listed: str, models: list[str]) -> None:
    """The names in ``self_play``'s ``key`` list that are not built-in players: each must be a
    model file or run folder of a two-player game (the exploiter only plays, in ``scripted``)."""
    players = reference_for(env_id).players
    exploiter = f", {EXPLOITER} (the game's search exploiter, planning against the learner)" if key == "scripted" else ""
    for name in models:
        if not Path(name).exists():
            raise UsageError(
                f"self_play {key}={listed!r}: {name!r} is none of the built-in players of {env_id} "
                f"({', '.join(players)}){exploiter}, a model file or a run folder"
            )
    for model, run_dir in [find_model(name) for name in models]:
        model_env = read_config(run_dir).get("env_id")
        if model_env not in two_player_ids():
            raise UsageError(f"self_play {key}: {str(model)!r} is a model of {model_env!r}, which has no opponent to play")
