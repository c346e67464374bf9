"""Run every benchmark and record the figures in benchmarks/RESULTS.md's study pages.

    python -m benchmarks                 # all of them, full size (tens of minutes on 2 cores)
    python -m benchmarks --quick         # a smoke pass with tiny sizes; RESULTS.md untouched
    python -m benchmarks --only naive_vs_batched episode_flatness

Each benchmark prints its table and writes <name>.json. A full run replaces, in the study page
that holds it (``benchmarks/studies/*.md``, linked from RESULTS.md's tables), the text between
``<!-- results:<name> -->`` and ``<!-- /results:<name> -->`` with the command, date, machine and
table; the notes around those markers are kept.
"""

from __future__ import annotations

import datetime
import importlib
import os
import re
import sys
from pathlib import Path

from agents.common.errors import UsageError
from agents.session.cli import Parser, run_cli
from benchmarks.common import RESULTS_DIR, machine

#: name -> (full-size arguments, quick arguments)
BENCHMARKS: dict[str, tuple[list[str], list[str]]] = {
    "env_throughput": ([], ["--steps", "300", "--rounds", "1", "--vector-sizes", "2", "--vector-steps", "400"]),
    "train_throughput": (
        [],
        [
            "--steps",
            "100",
            "--rounds",
            "1",
            "--learning-starts",
            "64",
            "--envs",
            "UAVGrid-v0",
            "--vec-envs",
            "dummy",
            "native",
        ],
    ),
    "naive_vs_batched": ([], ["--calls", "2"]),
    "episode_flatness": ([], ["--episodes", "3", "--anti-episodes", "2", "--save-freq", "200"]),
}


def update_results(path: Path, name: str, text: str) -> None:
    """Replace the marked section ``name`` of RESULTS.md with ``text`` (appended if absent)."""
    start, end = f"<!-- results:{name} -->", f"<!-- /results:{name} -->"
    content = path.read_text() if path.exists() else "# Benchmark results\n"
    block = f"{start}\n{text.strip()}\n{end}"
    pattern = re.compile(re.escape(start) + r".*?" + re.escape(end), re.DOTALL)
    content = (
        pattern.sub(lambda _: block, content)
        if pattern.search(content)
        else content.rstrip("\n") + f"\n\n## {name}\n\n{block}\n"
    )
    tmp = path.with_suffix(".md.tmp")
    tmp.write_text(content)
    os.replace(tmp, path)


def results_file(path: Path, name: str) -> Path:
    """Where the ``name`` block is kept: ``path`` if it holds it, else the study page beside it
    (``studies/*.md``) that does, else a new dated study page there (``path`` with no studies)."""
    start = f"<!-- results:{name} -->"
    studies = path.parent / "studies"
    for candidate in [path, *sorted(studies.glob("*.md"))]:
        if candidate.is_file() and start in candidate.read_text():
            return candidate
    if not studies.is_dir():
        return path
    return studies / f"{datetime.date.today()}-{name.replace('_', '-')}.md"


def record(path: Path, name: str, command: str, where: str, text: str) -> None:
    """Replace the ``name`` block, wherever RESULTS keeps it (:func:`results_file`), with the
    command that measured it, the date, the machine and ``text``."""
    update_results(results_file(path, name), name, f"`{command}` on {datetime.date.today()}, {where}:\n\n{text}")


def check_results_file(path: Path) -> None:
    """The results file a full run updates: a file (or none yet) in a folder that exists; said before
    any benchmark runs, not after the last."""
    if path.is_dir():
        raise UsageError(f"--results {str(path)!r} is a folder; give the results file (a .md) to update")
    if not path.parent.is_dir():
        raise UsageError(f"--results {str(path)!r}: its folder {str(path.parent)!r} does not exist")


def measure(name: str, bench_args: list[str]) -> dict:
    """One benchmark's run: what its module's main returns."""
    return importlib.import_module(f"benchmarks.{name}").main(bench_args)


def main(argv: list[str] | None = None) -> dict[str, dict]:
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv and not argv[0].startswith("-"):  # python -m benchmarks NAME: --only NAME, or the module, was meant
        name = argv[0]
        alone = f"; python -m benchmarks.{name} runs it alone" if (Path(__file__).parent / f"{name}.py").is_file() else ""
        raise UsageError(f"python -m benchmarks takes flags only, got {name!r}{alone}; --only takes: {', '.join(BENCHMARKS)}")
    parser = Parser(prog="python -m benchmarks", description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="tiny sizes, a smoke pass; RESULTS.md is not touched")
    parser.add_argument("--only", nargs="+", choices=list(BENCHMARKS), default=list(BENCHMARKS))
    parser.add_argument("--results", default=str(RESULTS_DIR / "RESULTS.md"), help="the results file to update")
    args = parser.parse_args(argv)
    if not args.quick:
        check_results_file(Path(args.results))
    results = {}
    for k, name in enumerate(args.only, 1):
        bench_args = BENCHMARKS[name][1 if args.quick else 0]
        command = " ".join(["python -m benchmarks." + name, *bench_args])
        print(f"\n[{k}/{len(args.only)}] {command}", flush=True)
        results[name] = result = measure(name, bench_args)
        if not args.quick:
            table = importlib.import_module(f"benchmarks.{name}").format_result(result)
            record(Path(args.results), name, command, result.get("machine", machine()), table)
    if not args.quick:
        print(f"\nupdated {args.results}")
    return results


if __name__ == "__main__":
    sys.exit(run_cli(main))
