"""Ship a trained BallDuel model as the built-in player ``champion`` (numpy only, no torch).

    python -m agents.export_champion RUN_DIR_OR_MODEL --out champion.npz
    python -m agents.export_champion RUN_DIR_OR_MODEL --force     # replace the package's champion

The model must be one of our Q-networks on the state vector with the clock (a run of
``agents.custom_train --env BallSumo-v0``: an MLP, no LayerNorm), the network its run's config
makes, with finite weights. Its layers are written as float32 arrays to an .npz (no pickle),
checked to choose the same actions as the model on random states, and ``opponent="champion"``
then plays it in every BallDuel env. Everything is checked before the file is written, and it
is written atomically: a refusal leaves every file as it was.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import numpy as np
import torch

from agents.algorithms.policy import load_policy
from agents.artifacts.models import find_model
from agents.artifacts.runs import FINAL_MODEL, atomic_path, check_output_file, read_config
from agents.common.errors import UsageError
from agents.session.checkpoint import load_checkpoint
from agents.session.cli import Parser, run_cli

DEFAULT_OUT = Path(__file__).resolve().parent.parent / "ballenvs" / "duel" / "champion.npz"
STATE_WITH_CLOCK = 11


def layers_of(state: dict, what: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weight, bias) pairs of a checkpoint's MLP head, first to last."""
    spec = state["spec"]
    parts = spec["parts"]
    if (
        list(parts) != [""]
        or parts[""].get("kind") != "box"
        or parts[""].get("size") != STATE_WITH_CLOCK
        or spec["layer_norm"]
        or spec.get("activation", "relu") != "relu"
    ):
        raise UsageError(f"{what}: the champion is an MLP on BallSumo-v0's state vector (11 numbers, ReLU, no LayerNorm)")
    weights = state["agent"]["q"]
    count = len(spec["net_arch"]) + 1
    return [
        (weights[f"head.{2 * k}.weight"].float().numpy(), weights[f"head.{2 * k}.bias"].float().numpy()) for k in range(count)
    ]


def main(argv: list[str] | None = None) -> Path:
    parser = Parser(prog="python -m agents.export_champion", description=__doc__.split("\n\n")[0].strip())
    parser.add_argument("path", metavar="RUN_DIR_OR_MODEL", help="a run folder (its final model) or a model file in one")
    parser.add_argument("--out", default=None, help="the .npz to write (a new file, or a regular file to replace)")
    parser.add_argument("--force", action="store_true", help="without --out: replace the package's own champion")
    args: argparse.Namespace = parser.parse_args(argv)
    if args.out is None and not args.force:
        raise UsageError(
            f"say where to write the champion: --out FILE.npz, or --force to replace the package's ({DEFAULT_OUT})"
        )
    out = check_output_file(DEFAULT_OUT if args.out is None else args.out, "--out", (".npz",))
    model_path, run_dir = find_model(args.path, (FINAL_MODEL,))
    if model_path.suffix != ".pt":
        raise UsageError(f"{str(model_path)!r}: the champion is one of our own agents' models (.pt)")
    config = read_config(run_dir)
    state = load_checkpoint(model_path)
    layers = layers_of(state, str(model_path))
    load_policy(model_path, config)  # the network its run's config makes, or a one-line refusal
    from ballenvs.duel.champion import check_layers, q_values
    from ballenvs.npz import NpzError

    try:
        layers = list(check_layers(tuple(layers), f"model {str(model_path)!r}"))
    except NpzError as error:
        raise UsageError(str(error)) from None
    from agents.algorithms.networks import QNetwork

    network = QNetwork(state["spec"])
    network.load_state_dict(state["agent"]["q"])
    probe = np.random.default_rng(0).uniform(-1.1, 1.1, size=(4096, STATE_WITH_CLOCK)).astype(np.float32)
    with torch.inference_mode():
        expected = network(torch.from_numpy(probe)).argmax(dim=1).numpy()
    if not np.array_equal(q_values(tuple(layers), probe).argmax(axis=1), expected):
        raise RuntimeError("the numpy network chooses other actions than the model")  # a bug, with its traceback
    arrays: dict[str, Any] = {"layers": np.array(len(layers))}
    for k, (weight, bias) in enumerate(layers):
        arrays |= {f"weight_{k}": weight, f"bias_{k}": bias}
    with atomic_path(out) as tmp, open(tmp, "wb") as file:
        np.savez(file, **arrays)
    print(f"wrote {out}: {config['env_id']} {config['algo']} model {model_path} ({out.stat().st_size:,} bytes)")
    return out


if __name__ == "__main__":
    sys.exit(run_cli(main))
