"""The RL Baselines3 Zoo's files in our run folders, so that its tools work on our runs.

The zoo finds a run at ``<folder>/<algo>/<env>_<n>/`` and reads there ``<env>.zip`` (the model,
for ``rl_zoo3.enjoy``, ``record_video``, ``push_to_hub``), ``<env>/config.yml`` (the
hyperparameters: frame stacking, env options), ``<env>/args.yml`` (the command's arguments),
``evaluations.npz`` (``rl_zoo3.plots.all_plots``) and ``*.monitor.csv`` (``plot_train``). A run
of ``agents.sb3_train`` (``runs/dqn/<env>_<n>/``) is such a folder itself. Our own DQN's run
holds the same in ``zoo/dqn/<env>_1/`` with its network exported to an SB3 DQN ``.zip``
(``-f RUN/zoo --algo dqn --exp-id 1``). Every file is plain YAML or a copy, written atomically;
ours (config.yml, final_model) stay as they are.
"""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agents.artifacts.runs import EVALUATIONS, atomic_path, write_yaml
from agents.common.configuration.config import NOT_ZOO_KEYS

#: The zoo's name of our DQNs' algorithm.
ZOO_ALGO = "dqn"


def zoo_dir(run_dir: Path, algo: str, env_id: str) -> Path:
    """Where a run keeps the zoo's files: its own folder for SB3's DQN, else ``zoo/dqn/<env>_1``."""
    return run_dir if algo == ZOO_ALGO else run_dir / "zoo" / ZOO_ALGO / f"{env_id}_1"


def write_zoo_files(
    run_dir: Path, config: dict[str, Any], write_model: Callable[[Path], None] | None, final_model: Path | None = None
) -> Path:
    """The zoo's files for a finished run with config ``config`` (our config.yml's): its model
    (``write_model(path)`` makes an SB3 DQN .zip there, or ``final_model`` is copied),
    hyperparameters and arguments, and, in a separate zoo folder, copies of the evaluations
    and monitor files. Returns the zoo folder."""
    env_id, hyper = config["env_id"], config["hyperparams"]
    folder = zoo_dir(run_dir, config["algo"], env_id)
    (folder / env_id).mkdir(parents=True, exist_ok=True)
    hyperparams = {key: value for key, value in hyper.items() if key not in NOT_ZOO_KEYS}
    write_yaml(folder / env_id / "config.yml", hyperparams)
    args = {
        "algo": ZOO_ALGO,
        "env": env_id,
        "env_kwargs": dict(hyper.get("env_kwargs") or {}),
        "seed": config["seed"],
        "n_timesteps": config["timesteps"],
        "gym_packages": ["ballenvs"],
        "trained_by": f"ballenvs {config['algo']}",
    }
    write_yaml(folder / env_id / "args.yml", args)
    model = folder / f"{env_id}.zip"
    if write_model is not None:
        write_model(model)
    elif final_model is not None:
        _copy(final_model, model)
    if folder != run_dir:
        for source in [run_dir / EVALUATIONS, *run_dir.glob("*.monitor.csv")]:
            if source.is_file():
                _copy(source, folder / source.name)
    return folder


def _copy(source: Path, target: Path) -> None:
    with atomic_path(target) as tmp:
        shutil.copyfile(source, tmp)
