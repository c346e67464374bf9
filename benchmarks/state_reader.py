"""An encoder that reads the game's state from the frames, trained before any policy (issue 99's
approach 2): the first stage of a pixel learner whose actor's CNN starts from it.

    python -m benchmarks.state_reader --config CONFIG --out READER.pt [--envs 16] [--steps 400]
                                      [--epochs 8] [--seed 0]

Games against the four scripts are played from the left seat by a player of random moves, each
held 1-16 steps (so that the balls move as in play, not jitter), and recorded as a learner of
``CONFIG``'s BallSumo-v0 section sees them (its frames, their size and stack) beside the state
``obs_type="state"`` shows (``state_info``). The section's own network (its ``policy_kwargs``: the
lean CNN) then learns to predict each state number, its error measured in that number's spread (as
``state_prediction`` weighs it), on four fifths of the games; the fifth held out gives R^2 a
number. ``READER.pt`` holds the encoder's weights, which ``encoder_from`` puts into our PPO's actor
(fine-tuned end to end from there). No policy is learned or taught here: the state is a target, as
:mod:`agents.algorithms.privileged` uses it.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from agents.common.errors import UsageError
from agents.session.cli import Parser, check_seed, run_cli
from benchmarks.common import check_ranges
from benchmarks.state_head import NUMBERS, SCRIPTS

#: The longest a recorded move is held, in steps.
LONGEST_HOLD = 16


def record(section: Any, envs: int, steps: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Frames and states of games against each script, as ``section``'s learner sees them."""
    from agents.algorithms.privileged import FRAMES, STATE, StateSteps
    from agents.common.configuration.hyperparameters import TeacherGame
    from agents.environments.steps import make_steps

    rng = np.random.default_rng(seed)
    frames, states = [], []
    for opponent in SCRIPTS:
        options = {**section.env_kwargs, "opponent": opponent, "state_info": True}
        played = StateSteps(
            make_steps(section.env_id, options, envs, seed, "native", section.frame_stack),
            TeacherGame(section.env_id, options),
        )
        observation = played.first_observations()
        actions, held = rng.integers(9, size=envs), np.zeros(envs, dtype=np.int64)
        for _ in range(steps):
            anew = held <= 0
            actions = np.where(anew, rng.integers(9, size=envs), actions)
            held = np.where(anew, rng.integers(1, LONGEST_HOLD + 1, size=envs), held) - 1
            frames.append(observation[FRAMES].copy())
            states.append(observation[STATE].copy())
            observation = played.step(actions).observations
        played.close()
    return np.concatenate(frames), np.concatenate(states)


def fit(spec: dict[str, Any], frames: np.ndarray, states: np.ndarray, epochs: int, seed: int) -> tuple[Any, dict[str, float]]:
    """The section's network's encoder and a linear head fitted to the states (each number in its
    spread) on four fifths of the samples; the encoder's weights and R^2 on the fifth held out."""
    import torch

    from agents.algorithms.networks import QNetwork
    from agents.algorithms.privileged import spread, standardized_error

    torch.manual_seed(seed)
    network = QNetwork(spec)
    head = torch.nn.Linear(network.features_width, states.shape[1])
    optimizer = torch.optim.Adam([*network.encoders.parameters(), *head.parameters()], lr=1e-3)
    order = np.random.default_rng(seed).permutation(len(frames))
    held_out, train = order[: len(order) // 5], order[len(order) // 5 :]
    truth = torch.as_tensor(states)
    scale = spread(truth[train])
    for _ in range(epochs):
        for batch in np.array_split(np.random.default_rng(seed).permutation(train), max(len(train) // 256, 1)):
            predicted = head(network.features(torch.as_tensor(frames[batch])))
            loss = standardized_error(predicted, truth[batch], scale)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
    with torch.no_grad():
        predicted = torch.cat([head(network.features(torch.as_tensor(frames[part]))) for part in np.array_split(held_out, 16)])
    actual = states[held_out]
    explained = 1.0 - ((predicted.numpy() - actual) ** 2).mean(axis=0) / np.maximum(actual.var(axis=0), 1e-12)
    return network.encoders.state_dict(), dict(zip(NUMBERS, explained.round(3).tolist(), strict=False))


def main(argv: list[str] | None = None) -> dict[str, float]:
    parser = Parser(prog="python -m benchmarks.state_reader", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--config", required=True, help="a config file with a BallSumo-v0 section on pixels (its frames, its network)"
    )
    parser.add_argument("--out", required=True, help="the reader's weights, for encoder_from")
    parser.add_argument("--envs", type=int, default=16, help="games at once against each script")
    parser.add_argument("--steps", type=int, default=400, help="steps recorded against each script")
    parser.add_argument("--epochs", type=int, default=8, help="passes over the recorded frames")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    check_ranges(
        [("--envs", args.envs, (1, 4096)), ("--steps", args.steps, (1, 100_000)), ("--epochs", args.epochs, (1, 1000))]
    )
    check_seed(args.seed)
    import torch

    from agents.algorithms.networks import network_spec
    from agents.algorithms.ppo import ENCODER_FORMAT
    from agents.artifacts.runs import atomic_path, check_output_file
    from agents.common.configuration.config import build_section
    from agents.common.configuration.config_files import load_section
    from agents.common.configuration.registry import ALGORITHMS

    out = check_output_file(args.out, "--out", (".pt",))
    section = build_section("BallSumo-v0", load_section(args.config, "BallSumo-v0"), {}, ALGORITHMS["ppo"].schema)
    if section.env_kwargs.get("obs_type") != "pixels":
        raise UsageError(
            f"--config {args.config!r}: its BallSumo-v0 section reads {section.env_kwargs.get('obs_type')!r}, a reader pixels"
        )
    torch.set_num_threads(1)
    frames, states = record(section, args.envs, args.steps, args.seed)
    spec = network_spec(_frames_space(frames), 9, section.policy, section.network)
    encoders, explained = fit(spec, frames, states, args.epochs, args.seed)
    with atomic_path(out) as tmp:
        torch.save({"format": ENCODER_FORMAT, "spec": spec, "encoders": encoders, "explained": explained}, tmp)
    print(f"{len(frames)} frames; held out, R^2: " + " ".join(f"{name}={value:.2f}" for name, value in explained.items()))
    return explained


def _frames_space(frames: np.ndarray) -> Any:
    from gymnasium import spaces

    return spaces.Box(0, 255, frames.shape[1:], np.uint8)


if __name__ == "__main__":
    sys.exit(run_cli(main))
