"""Headless pygame for every test, set before anything imports it."""

import atexit
import os
import shutil
import signal
import tempfile

import pytest

os.environ["SDL_VIDEODRIVER"] = "dummy"
os.environ["SDL_AUDIODRIVER"] = "dummy"
os.environ["PYGAME_HIDE_SUPPORT_PROMPT"] = "1"
# numpy's small matrix products (the champion's, the planner's) on one OpenBLAS thread, as the
# agents' commands run them (agents/__init__.py says why).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
# What the suite's libraries write outside tmp_path goes into one folder, removed at exit: SDL's
# runtime dir (it complains on stderr without one), and the empty log folder stable-baselines3
# makes for every model that learns without a logger set (else one SB3-<time> folder in /tmp each).
_SCRATCH = tempfile.mkdtemp(prefix="ballenvs-tests-")
atexit.register(shutil.rmtree, _SCRATCH, ignore_errors=True)
os.environ.setdefault("XDG_RUNTIME_DIR", _SCRATCH)
os.environ.setdefault("SB3_LOGDIR", os.path.join(_SCRATCH, "sb3"))


#: The signals the commands stop on. A command stopped in-process ignores further stops on its way out
#: (agents.common.stops.ignore_stops); left so, the next test in the worker would never see its own.
_STOP_SIGNALS = [getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGUSR1") if hasattr(signal, name)]


@pytest.fixture(autouse=True)
def _stop_handlers_restored():
    """Every test starts with the stop signals' handlers Python starts with, and leaves them so."""
    before = {signum: signal.getsignal(signum) for signum in _STOP_SIGNALS}
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for signum in _STOP_SIGNALS[1:]:
        signal.signal(signum, signal.SIG_DFL)
    yield
    for signum, handler in before.items():
        signal.signal(signum, handler)


#: A tiny custom run on BallSumo-v0's state vector (the sumo_run fixture), but its --log-dir.
SUMO_RUN = ["--env", "BallSumo-v0", "--opponent", "chaser", "--timesteps", "300", "--n-envs", "2", "--eval-freq", "0"]
SUMO_RUN += ["--no-progress", "--hyperparams", "policy=MlpPolicy", "learning_starts=100", "buffer_size=500"]
SUMO_RUN += ["policy_kwargs=dict(net_arch=[16])"]


@pytest.fixture(scope="session")
def sumo_run(tmp_path_factory):
    """A tiny custom run on BallSumo-v0's state vector (what agents.export_champion ships, the network
    benchmarks.search_with_network searches with), trained once a session; tests that change it
    copy it first."""
    from agents import custom_train
    from tests.helpers import shared_training

    return shared_training(tmp_path_factory, "sumo_run", custom_train.main, SUMO_RUN, "custom/BallSumo-v0_1")
