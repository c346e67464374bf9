"""Training and evaluation of agents on the ballenvs environments.

``agents`` imports ``ballenvs``, never the reverse. It needs the ``agents`` extra
(stable-baselines3, torch, PyYAML, ...); without it, its command lines say what to install.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agents.artifacts.model_players import QPlayer

__all__ = ["load_player"]

_NEEDS = ("yaml", "torch", "stable_baselines3", "tqdm", "matplotlib")
# python -m agents.X: the package is imported while the module is looked for, argv[0] still "-m".
_STARTING_A_COMMAND = sys.argv[:1] == ["-m"]


def _check_extra() -> None:
    missing = [name for name in _NEEDS if importlib.util.find_spec(name) is None]
    if not missing:
        return
    message = (
        f"the agents need the 'agents' extra (missing: {', '.join(missing)}): "
        "pip install 'ballenvs[agents]', or pip install -e '.[agents]' in a checkout"
    )
    if _STARTING_A_COMMAND:
        print(f"error: {message}", file=sys.stderr)
        raise SystemExit(2)
    raise ImportError(message)


if _STARTING_A_COMMAND:  # a stop during the command's imports exits as one during its run would
    from agents.common.stops import exit_on_stops_while_starting

    exit_on_stops_while_starting()
_check_extra()

if _STARTING_A_COMMAND:  # a command's own process: a library import sets no variable in its user's
    # Before anything imports numpy: its OpenBLAS threads spin while they wait as torch's do. The matrix
    # products numpy runs here are small (the champion's MLP, a few hundred rows), and on 2 cores with
    # one busy they ran 9-18x slower on 2 threads than on 1 (benchmarks/RESULTS.md, "The planner").
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    # Before anything imports torch: its OpenMP threads sleep while they wait instead of spinning
    # (agents.common.threads says why, with the measurement).
    from agents.common.threads import prefer_passive_waiting

    prefer_passive_waiting()


def load_player(path: str | os.PathLike[str], device: str = "cpu") -> QPlayer:
    """Any model our commands write as a player of its game, for ``gym.make(..., opponent=...)``
    (:func:`agents.artifacts.model_players.load_player`, which says what it reads)."""
    from agents.artifacts.model_players import load_player as load

    return load(os.fspath(path), device)
