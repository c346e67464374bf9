"""What a pixel learner's actor reads of the game: its features through its state head, R^2 a number.

    python -m benchmarks.state_head RUN_OR_MODEL [--steps 150] [--envs 16] [--seed 7]

For a run of our PPO with ``state_prediction`` (its actor's features predict the game's state in
training, :mod:`agents.algorithms.privileged`): its actor plays ``--envs`` games against each of the
four scripts for ``--steps`` steps (greedy, a fifth of its moves random, so that it meets more than
its own play), and the state head's predictions on the frames it saw are scored against the state
they were drawn from, R^2 for each number (positions, velocities, distances to the edge, the clock).
A learner that reads positions but not velocities cannot time a push (benchmarks/studies, "Both balls
from pixels, from nothing").
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from agents.common.errors import UsageError
from agents.session.cli import Parser, check_seed, run_cli
from benchmarks.common import check_ranges

#: The state's numbers, in the order ``obs_type="state"`` shows them.
NUMBERS = ("x", "y", "vx", "vy", "other x", "other y", "other vx", "other vy", "edge", "other edge", "time left")
SCRIPTS = ("chaser", "pusher", "anchor", "sprinter")


def read_state(model: Any, envs: int, steps: int, seed: int) -> dict[str, float]:
    """R^2 of each number of the state, from ``model``'s actor and state head on games against the scripts."""
    import torch

    from agents.algorithms.networks import QNetwork
    from agents.algorithms.privileged import FRAMES, STATE, StateSteps
    from agents.artifacts.models import find_model
    from agents.artifacts.runs import read_config
    from agents.common.configuration.hyperparameters import TeacherGame
    from agents.environments.steps import make_steps
    from agents.session.checkpoint import load_checkpoint

    model_path, run_dir = find_model(model)
    config = read_config(run_dir)
    if config.get("algo") != "ppo":
        raise UsageError(
            f"{str(model_path)!r}: a model of --algo {config.get('algo')}; this reads a run of our PPO with state_prediction"
        )
    saved = load_checkpoint(model_path)
    if "state_head" not in saved.get("agent", {}):
        raise UsageError(f"{str(model_path)!r}: its actor has no state head (a run of our PPO with state_prediction)")
    actor = QNetwork(saved["spec"])
    actor.load_state_dict(saved["agent"]["q"])
    head = torch.nn.Linear(actor.features_width, saved["agent"]["state_head"]["weight"].shape[0])
    head.load_state_dict(saved["agent"]["state_head"])
    hyper = config["hyperparams"]
    frames, states = [], []
    rng = np.random.default_rng(seed)
    for opponent in SCRIPTS:
        options = {**(hyper.get("env_kwargs") or {}), "opponent": opponent, "state_info": True}
        steps_of = make_steps(config["env_id"], options, envs, seed, "native", hyper.get("frame_stack"))
        played = StateSteps(steps_of, TeacherGame(config["env_id"], options))
        observation = played.first_observations()
        for _ in range(steps):
            with torch.no_grad():
                greedy = actor(torch.as_tensor(observation[FRAMES])).argmax(dim=1).numpy()
            actions = np.where(rng.random(envs) < 0.2, rng.integers(9, size=envs), greedy)
            frames.append(observation[FRAMES].copy())
            states.append(observation[STATE].copy())
            observation = played.step(actions).observations
        played.close()
    seen, truth = torch.as_tensor(np.concatenate(frames)), np.concatenate(states)
    with torch.no_grad():
        predicted = head(actor.features(seen)).numpy()
    explained = 1.0 - ((predicted - truth) ** 2).mean(axis=0) / np.maximum(truth.var(axis=0), 1e-12)
    return dict(zip(NUMBERS, explained.round(3).tolist(), strict=False))


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = Parser(prog="python -m benchmarks.state_head", description=__doc__.split("\n\n")[0])
    parser.add_argument("model", metavar="RUN_OR_MODEL", help="a run of our PPO with state_prediction, or a model file in one")
    parser.add_argument("--steps", type=int, default=150, help="steps of the games against each script")
    parser.add_argument("--envs", type=int, default=16, help="games at once against each script")
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args(argv)
    check_ranges([("--steps", args.steps, (1, 100_000)), ("--envs", args.envs, (1, 4096))])
    check_seed(args.seed)
    import torch

    torch.set_num_threads(1)
    explained = read_state(args.model, args.envs, args.steps, args.seed)
    print(" ".join(f"{name}={value:.2f}" for name, value in explained.items()))
    return explained


if __name__ == "__main__":
    sys.exit(run_cli(main))
