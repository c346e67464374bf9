"""Play a trained model: mean return, episode length, and for BallDuel wins / draws / losses.

    python -m agents.evaluate RUN_DIR_OR_MODEL [--episodes N] [--render human] [--deterministic] [--opponent NAME]

Given a run folder it loads the best model (else the final one) and rebuilds the env and
wrappers from the run's config.yml. Models of agents.sb3_train and agents.custom_train load alike.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from agents.cli import DEVICES, describe_device, resolve_device, run_cli
from agents.envs import make_vec
from agents.runs import BEST_MODEL, CHECKPOINTS, CONFIG_NAME, FINAL_MODEL, read_config
from ballenvs.duel.opponents import BUILTIN_OPPONENTS

MODEL_SUFFIXES = (".zip", ".pt")


@dataclass
class EvalResult:
    returns: list[float]
    lengths: list[int]
    outcomes: Counter = field(default_factory=Counter)  # BallDuel: left / right / draw / time-out

    def summary(self, env_id: str) -> str:
        r, n = np.asarray(self.returns), len(self.returns)
        line = f"{env_id}: {n} episodes, return {r.mean():.3f} +- {r.std():.3f}, length {np.mean(self.lengths):.1f}"
        if self.outcomes:
            o = self.outcomes
            line += f"; wins {o['left']} / draws {o['draw'] + o['time-out']} / losses {o['right']}"
            line += f" (win rate {o['left'] / n:.0%}; {o['time-out']} draws by time-out)"
        return line


def model_file(run_dir: Path, name: str) -> Path | None:
    """The run folder's model called ``name`` (best_model, final_model), whichever trainer wrote it."""
    for suffix in MODEL_SUFFIXES:
        if (run_dir / f"{name}{suffix}").is_file():
            return run_dir / f"{name}{suffix}"
    return None


def find_model(path: str | Path) -> tuple[Path, Path]:
    """The model file and its run folder, from either of them."""
    path = Path(path)
    if path.is_dir():
        for name in (BEST_MODEL, FINAL_MODEL):
            found = model_file(path, name)
            if found is not None:
                return found, path
        raise FileNotFoundError(f"no {BEST_MODEL} or {FINAL_MODEL} model in {str(path)!r}")
    if not path.is_file():
        raise FileNotFoundError(f"no model file or run folder at {str(path)!r}")
    run_dir = path.parent.parent if path.parent.name == CHECKPOINTS else path.parent
    if not (run_dir / CONFIG_NAME).is_file():
        raise FileNotFoundError(f"model {str(path)!r} has no {CONFIG_NAME} in its run folder {str(run_dir)!r}")
    return path, run_dir


def _load_sb3(model_path: Path, device: str) -> Any:
    from stable_baselines3 import DQN

    return DQN.load(model_path, device=device)


def _load_custom(model_path: Path, device: str) -> Any:
    from agents.custom.checkpoint import load_policy

    return load_policy(model_path, device)


#: algo (as written in a run's config.yml) -> loader of an object with predict(obs, deterministic)
LOADERS: dict[str, Callable[[Path, str], Any]] = {"dqn": _load_sb3, "custom": _load_custom}


def load_model(algo: str, model_path: Path, device: str) -> Any:
    if algo not in LOADERS:
        raise ValueError(f"unknown algo {algo!r} in the run's config; valid: {', '.join(LOADERS)}")
    try:
        return LOADERS[algo](model_path, device)
    except Exception as error:  # a corrupt zip or pickle raises whatever its reader raises
        raise ValueError(f"cannot load model {str(model_path)!r}: {type(error).__name__}: {error}") from None


def evaluate(
    model: Any,
    config: dict[str, Any],
    episodes: int,
    seed: int = 0,
    deterministic: bool = True,
    env_overrides: dict[str, Any] | None = None,
) -> EvalResult:
    """Play ``episodes`` episodes of the run's env (seeded ``seed``) with ``model.predict``."""
    hyper = config["hyperparams"]
    env_kwargs = {**hyper.get("env_kwargs", {}), **(env_overrides or {})}
    env = make_vec(config["env_id"], env_kwargs, 1, seed, "dummy", hyper.get("frame_stack"))
    result = EvalResult([], [])
    obs = env.reset()
    try:
        while len(result.returns) < episodes:
            action, _ = model.predict(obs, deterministic=deterministic)
            obs, _, dones, infos = env.step(action)
            if dones[0]:
                info = infos[0]
                result.returns.append(float(info["episode"]["r"]))
                result.lengths.append(int(info["episode"]["l"]))
                if "winner" in info:
                    result.outcomes[info["winner"] or "time-out"] += 1
    finally:
        env.close()
    return result


def main(argv: list[str] | None = None) -> EvalResult:
    parser = argparse.ArgumentParser(prog="python -m agents.evaluate", description=__doc__.split("\n\n")[0].strip())
    parser.add_argument(
        "path", metavar="RUN_DIR_OR_MODEL", help="a run folder (runs/dqn/BallDuel-v0_1) or a model file in one"
    )
    parser.add_argument("--episodes", type=int, default=10, help="episodes to play (default: 10)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the first episode (default: 0)")
    parser.add_argument("--render", choices=("human",), default=None, help="show the games in a window")
    parser.add_argument("--deterministic", action="store_true", help="always take the greedy action (no epsilon)")
    parser.add_argument(
        "--opponent",
        choices=BUILTIN_OPPONENTS,
        default=None,
        help="BallDuel-v0: play against this opponent instead of the run's",
    )
    parser.add_argument("--device", choices=DEVICES, default="auto")
    args = parser.parse_args(argv)
    if args.episodes < 1:
        raise ValueError(f"--episodes must be >= 1, got {args.episodes}")
    model_path, run_dir = find_model(args.path)
    config = read_config(run_dir)
    overrides: dict[str, Any] = {}
    if args.opponent:
        if config["env_id"] != "BallDuel-v0":
            raise ValueError(f"--opponent applies to BallDuel-v0, not {config['env_id']}")
        overrides["opponent"] = args.opponent
    if args.render:
        overrides["render_mode"] = args.render
    device = resolve_device(args.device)
    model = load_model(config["algo"], model_path, device)
    print(f"{model_path} ({config['algo']}) on {describe_device(device)}")
    result = evaluate(model, config, args.episodes, args.seed, args.deterministic, overrides)
    print(result.summary(config["env_id"]))
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
