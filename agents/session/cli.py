"""The command line every tool shares: the same flags with the same meanings, and the same exits.

Exit status 2 with one line on stderr for bad input (:class:`agents.common.errors.UsageError`,
raised before any run folder exists); 130 after Ctrl-C, with the interrupted model's path;
a bug keeps its traceback (exit status 1).
"""

from __future__ import annotations

import argparse
import errno
import sys
from collections.abc import Callable
from typing import Any, NoReturn

from agents.common.errors import UsageError
from agents.common.readers import MAX_COUNT, MAX_ENVS, MAX_SEED
from agents.common.stops import Interrupted, how_stopped, ignore_stops, signal_of, stopping_on_signals
from agents.common.threads import apply_threads, threads_flag
from agents.environments.ids import VEC_ENVS, check_env_id, check_two_player_env
from agents.session.tracking import check_tracking
from ballenvs.cli import MAX_GAMES, CommandError

DEVICES = ("auto", "cpu", "cuda")
DEFAULT_ENV = "BallDuel-v0"
#: How often a run is evaluated, and on how many episodes, where neither its flags nor its config say.
EVAL_FREQ, EVAL_EPISODES = 25_000, 10


def check_seed(seed: int, flag: str = "--seed", high: int = MAX_SEED) -> int:
    """A seed in 0..``high`` (default: every seed numpy and torch take), or a one-line UsageError."""
    if not 0 <= seed <= high:
        raise UsageError(f"{flag} must be in 0..{high}, got {seed}")
    return seed


class HelpFormatter(argparse.ArgumentDefaultsHelpFormatter):
    """Shows each flag's default once: not where its help already says it, nor when there is none."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, False, [], argparse.SUPPRESS):
            return text
        return super()._get_help_string(action) or text


class Parser(argparse.ArgumentParser):
    """argparse whose errors are UsageErrors: one line and exit status 2 through :func:`run_cli`
    (argparse's own would add a usage block)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **{"formatter_class": HelpFormatter, **kwargs})

    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


class Renamed(argparse.Action):
    """A flag that has a new name: given, it is refused in one line naming the new one."""

    def __init__(self, option_strings: list[str], dest: str, new: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, **kwargs)
        self.new = new

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        raise UsageError(f"{option_string} is now called {self.new}: {self.new} {values}")


def named(flag: str) -> Callable[[str], str]:
    """An argparse type for a flag that names something: an empty or blank name is refused (it
    would read as the flag left out)."""

    def parse(text: str) -> str:
        if not text.strip():
            raise argparse.ArgumentTypeError(f"{text!r} names nothing")
        return text

    parse.__name__ = flag  # argparse names the type in its refusal
    return parse


def add_device_flags(parser: argparse.ArgumentParser) -> None:
    """--device and --threads: where torch computes, and with how many CPU threads."""
    parser.add_argument("--device", choices=DEVICES, default="auto", help="auto: CUDA when available, else CPU")
    parser.add_argument(
        "--threads",
        default="auto",
        type=threads_flag,
        help="torch's CPU threads: a number, or auto: OMP_NUM_THREADS when set, else the cores no other process keeps "
        "busy when the command starts (idle threads sleep rather than spin, so load that comes later costs its share)",
    )


def add_run_flags(parser: argparse.ArgumentParser, resumes: bool = True, configured_evaluations: bool = True) -> None:
    """The flags that say what to train and how, shared by the trainers and agents.compare
    (``resumes``: the command takes --resume, whose run sets the defaults; ``configured_evaluations``:
    a config section may set the evaluations' defaults; agents.compare sets its own, alike for all)."""
    resumed = "; with --resume: the run's" if resumes else ""
    eval_freq_default = f"; default: the config's eval_freq, else {EVAL_FREQ:,}" if configured_evaluations else ""
    eval_episodes_default = "the config's eval_episodes, else " if configured_evaluations else ""
    parser.add_argument("--env", default=None, help=f"environment id (default: {DEFAULT_ENV}{resumed})")
    parser.add_argument("--timesteps", type=int, default=None, help="env steps to train (default: the config's n_timesteps)")
    parser.add_argument("--n-envs", type=int, default=None, help="parallel environments (default: the config's n_envs)")
    parser.add_argument(
        "--vec-env",
        choices=("auto", *VEC_ENVS),
        default=None,
        help="auto (default): native for envs with a batched vector env (all of ours), else subproc; native: the env's "
        "own vector env, every game in one numpy call; dummy: single envs one after the other; subproc: a worker "
        "process per env (only pays when one env step is costly)",
    )
    add_device_flags(parser)
    parser.add_argument("--config", default=None, help="hyperparameter file in the RL Zoo format (default: the shipped one)")
    # Given twice, a flag's pairs add up (the later value of a key wins), as a user who wrote both means.
    parser.add_argument(
        "--hyperparams", nargs="*", action="extend", default=[], metavar="KEY=VALUE",
        help="override config values, e.g. learning_rate=1.0e-4",
    )  # fmt: skip
    parser.add_argument(
        "--env-kwargs", nargs="*", action="extend", default=[], metavar="KEY=VALUE",
        help="env options, e.g. opponent=pusher obs_type=state",
    )  # fmt: skip
    parser.add_argument(
        "--opponent",
        default=None,
        type=named("--opponent"),
        help="envs with an opponent (BallDuel): who plays it, one of the env's built-in players (default: the config's "
        f"env_kwargs{resumed}); self: the learner's own snapshots (self-play; the pool's settings in "
        "the section's self_play key)",
    )
    parser.add_argument("--log-dir", default="runs", help="where run folders go")
    parser.add_argument(
        "--eval-freq",
        type=int,
        default=None,
        help=f"evaluate every this many env steps on a separate env (0: never{eval_freq_default})",
    )
    parser.add_argument(
        "--eval-episodes",
        type=int,
        default=None,
        help=f"episodes per evaluation, against each opponent (default: {eval_episodes_default}{EVAL_EPISODES})",
    )


#: The final model's games at the end of a whole run (--final-games' default).
FINAL_GAMES = 100


def trainer_parser(prog: str, description: str, algos: tuple[str, ...]) -> argparse.ArgumentParser:
    """The trainers' command line; ``algos``: the registered algorithms this trainer trains, the first the default."""
    parser = Parser(
        prog=prog,
        description=description,
        epilog="Hyperparameters come from the env's section of --config; --hyperparams overrides them. "
        "Output goes to <log-dir>/<algo>/<env>_<n>/: config.yml, checkpoints/, best_model, final_model, "
        "evaluations.npz, monitor CSVs, progress.csv, TensorBoard events (tensorboard --logdir runs) and the RL Zoo's "
        "files (<env>.zip, <env>/config.yml, <env>/args.yml). "
        "Exit status: 0 done, 2 bad input (nothing written), 130 interrupted (model saved), 1 a bug.",
    )
    parser.add_argument(
        "--algo",
        default=algos[0],
        help=f"the algorithm: {', '.join(algos)} (default: {algos[0]}; with --resume: the run's)",
    )
    add_run_flags(parser)
    parser.add_argument("--track", action="store_true", help="log the run to Weights & Biases (pip install 'ballenvs[wandb]')")
    parser.add_argument("--wandb-project", default="ballenvs", help="with --track: the W&B project")
    parser.add_argument("--wandb-entity", default=None, help="with --track: the W&B entity (team or user)")
    parser.add_argument(
        "--seed",
        type=int,
        default=None,
        help="seeds the envs (seed, seed+1, ...) and the learner (default: 0; with --resume: the run's)",
    )
    parser.add_argument(
        "--teacher",
        default=None,
        metavar="PLAYER",
        help="for an algorithm that learns from a teacher (distill, kickstart): a built-in player, or a model file or "
        "run folder of the same env on its state (default: the config's teacher)",
    )
    parser.add_argument(
        "--final-games",
        type=int,
        default=None,
        help=f"games the final model plays against the run's own env once it is saved, greedy: the figure to quote "
        f"(default: {FINAL_GAMES} for a whole run of a section that is not self-play, else 0)",
    )
    parser.add_argument("--save-freq", type=int, default=50_000, help="checkpoint every this many env steps (0: never)")
    parser.add_argument(
        "--resume",
        default=None,
        metavar="PATH",
        help="continue a run (its folder, or a model in it) with its env, n_envs and hyperparameters; --timesteps more steps",
    )
    parser.add_argument(
        "--save-replay-buffer", action="store_true", help="save the replay buffer with the final model, for --resume"
    )
    parser.add_argument(
        "--address",
        default=None,
        help="rllib_ppo: the Ray cluster to run on (its head's host:port, or auto; default: a local Ray of this machine)",
    )
    add_progress_flag(parser, "evaluations are still printed")
    return parser


def add_progress_flag(parser: argparse.ArgumentParser, still_printed: str) -> None:
    """--no-progress, the same flag on every command that runs long (:class:`agents.session.console.Console`)."""
    parser.add_argument("--no-progress", action="store_true", help=f"no progress bar or progress lines ({still_printed})")


def check_flags(args: argparse.Namespace) -> tuple[str, str]:
    """A training command's flags, as far as the parser has them: counts, frequencies, the seed,
    the device (its torch threads set, :func:`resolve_device`), the env and tracking. Returns the
    device and its threads in words."""
    for flag, most in (("timesteps", MAX_COUNT - 1), ("n_envs", MAX_ENVS), ("eval_episodes", MAX_COUNT - 1)):
        value = getattr(args, flag, None)
        if value is not None and not 1 <= value <= most:
            raise UsageError(f"--{flag.replace('_', '-')} must be in 1..{most}, got {value}")
    final_games = getattr(args, "final_games", None)
    if final_games is not None and not 0 <= final_games <= MAX_GAMES:
        raise UsageError(f"--final-games must be in 0..{MAX_GAMES:,}, got {final_games}")
    for flag in ("save_freq", "eval_freq"):
        value = getattr(args, flag, 0)
        if value is not None and not 0 <= value < MAX_COUNT:
            raise UsageError(f"--{flag.replace('_', '-')} must be in 0..{MAX_COUNT - 1}, got {value}")
    if getattr(args, "log_dir", None) == "":
        raise UsageError("--log-dir '': name a folder (the default is runs)")
    if getattr(args, "seed", None) is not None:
        check_seed(args.seed)
    device = resolve_device(args.device, args.threads)
    if args.env is not None:
        check_env_id(args.env)
    if getattr(args, "track", False):
        check_tracking(args)
    return device


def check_two_player_flags(args: argparse.Namespace) -> None:
    """What the commands that play two sides share: ``--games`` even (half from each side), the
    seed in range, ``--env`` (when given) a two-player game."""
    if args.games < 2 or args.games % 2:
        raise UsageError(f"--games must be an even number >= 2 (half from each side), got {args.games}")
    check_seed(args.seed)
    if args.env is not None:
        check_two_player_env(args.env)


def resolve_device(requested: str, threads: str = "auto", update_work: int | None = None) -> tuple[str, str]:
    """The torch device to use, "cuda" or "cpu" ("cuda" without CUDA is an error), and the CPU
    threads chosen for ``threads`` (``--threads``; ``update_work``: see
    :func:`agents.common.threads.choose_threads`) in words, for :func:`describe_device`. Sets
    torch's CPU threads too: a GPU run's host side uses them as well."""
    import torch

    threads_chosen = apply_threads(threads, update_work)
    available = torch.cuda.is_available()
    if requested == "cuda" and not available:
        raise UsageError(f"--device cuda: CUDA is not available here (torch {torch.__version__}); use --device auto or cpu")
    device = "cuda" if requested == "cuda" or (requested == "auto" and available) else "cpu"
    if device == "cuda":
        # Fixed input sizes: let cuDNN pick its fastest kernels once.
        torch.backends.cudnn.benchmark = True
    return device, threads_chosen


def describe_device(device: str, threads: str) -> str:
    """The device and the CPU threads chosen for it (:func:`resolve_device`'s words), for the line a
    command prints at start."""
    import torch

    if device == "cuda":
        return f"cuda ({torch.cuda.get_device_name(0)}), host with {threads}"
    return f"cpu with {threads}, torch {torch.__version__}"


def run_cli(main: Callable[[list[str] | None], Any], argv: list[str] | None = None) -> int:
    """Run ``main`` and turn its outcome into an exit status (see the module docstring)."""
    with stopping_on_signals():
        try:
            main(argv)
        except (UsageError, CommandError) as error:  # CommandError: the environments' own commands'
            print(f"error: {error}", file=sys.stderr)
            return 2
        except OSError as error:
            if error.errno != errno.ENAMETOOLONG:
                raise
            # Only a path given on the command line is that long: bad input, found where it is first used.
            print(f"error: {str(error.filename)[:60]!r}...: a name too long for the file system", file=sys.stderr)
            return 2
        except Interrupted as interrupted:
            print(interrupted, file=sys.stderr)
            return 128 + interrupted.signum
        except KeyboardInterrupt as stop:
            ignore_stops()
            signum = signal_of(stop)
            print(how_stopped(signum), file=sys.stderr)
            return 128 + signum
    return 0
