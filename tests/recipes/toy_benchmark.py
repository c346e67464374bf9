"""A new speed benchmark, as CONTRIBUTING's recipe adds one: ours (numpy's sum) beside the reference
(a Python loop over the same numbers), timed in turn in one process, and their ratio. Not a
benchmark worth keeping: the test only shows that a module and an entry are all it takes."""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

from agents.session.cli import Parser, run_cli
from benchmarks.common import Measurements, check_ranges, machine, progress_flag, row, write_json


def measure(rounds: int, size: int) -> dict[str, Any]:
    numbers = np.random.default_rng(0).random(size)
    listed = numbers.tolist()
    seconds = {"ours": 0.0, "reference": 0.0}
    for _ in range(rounds):  # in turn, A B A B, so that both see the same load
        for name, call in (("ours", lambda: numbers.sum()), ("reference", lambda: sum(listed))):
            start = time.perf_counter()
            call()
            seconds[name] += time.perf_counter() - start
    return {"benchmark": "toy_benchmark", "machine": machine(), "rounds": rounds, "size": size, **seconds}


def format_result(result: dict[str, Any]) -> str:
    """The table ``python -m benchmarks`` writes into the study page that holds its block."""
    ratio = result["ours"] / result["reference"]
    return "\n".join(
        ["| what | ours / the reference |", "|---|---:|", row(f"a sum of {result['size']} numbers", f"{ratio:.2f}x")]
    )


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = Parser(prog="python -m benchmarks.toy_benchmark", description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=100)
    parser.add_argument("--size", type=int, default=100_000)
    progress_flag(parser)
    args = parser.parse_args(argv)
    check_ranges([("--rounds", args.rounds, (1, 100_000)), ("--size", args.size, (1, 10**8))])
    with Measurements(1, not args.no_progress) as shown:
        result = measure(args.rounds, args.size)
        shown.result(format_result(result))
    print(f"wrote {write_json('toy_benchmark', result)}")
    return result


if __name__ == "__main__":
    sys.exit(run_cli(main))
