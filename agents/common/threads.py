"""How many CPU threads torch computes with, and how its idle threads wait.

torch's CPU kernels run on an OpenMP pool whose threads spin while they wait for each other. On
a machine whose cores are all ours that is the fastest choice; once another process takes a core
(a browser, a second training seed) a spinning thread burns the time slice its partner needs and
the run slows many times over, not by its share of the cores. Measured on 2 cores
(benchmarks/RESULTS.md, "Sharing the machine"): two custom DQN runs on UAVGrid started together took 123 s with
torch's defaults against 8.0 s with one thread each. So:

- the wait policy is passive (``OMP_WAIT_POLICY=PASSIVE``, set by ``agents/__init__.py`` before
  torch is imported, unless the user set it): a waiting thread sleeps, and load that arrives
  later costs its share, not a collapse;
- ``--threads auto`` (every command's default) uses ``OMP_NUM_THREADS`` when set, else the cores
  free to this process when it starts: the cores it may run on less those other processes keep
  busy, at least one;
- and no more than the work pays for: where a command knows the multiply-adds of its largest call
  (a training run: one update's forward and backward passes over a minibatch), a second thread is
  taken only from :data:`SECOND_THREAD_FROM` on. Below it, handing each operation's halves to a
  second thread costs more than the half it saves: every shipped section trained faster on one
  thread than on two, the main command's in 0.80x the time (benchmarks/RESULTS.md, "Threads that pay").
"""

from __future__ import annotations

import argparse
import os
import time

from agents.common.errors import UsageError

WAIT_POLICY_VAR = "OMP_WAIT_POLICY"
PASSIVE = "PASSIVE"
_SAMPLE_SECONDS = 0.25  # long enough for /proc/stat's 10 ms ticks to count a busy core to within 5%


def prefer_passive_waiting() -> None:
    """Let torch's waiting threads sleep rather than spin, unless the user chose. Takes effect only
    before the OpenMP runtime loads (before ``import torch``), hence its call in ``agents/__init__``."""
    os.environ.setdefault(WAIT_POLICY_VAR, PASSIVE)


def usable_cores() -> int:
    """The cores this process may run on: its affinity mask, capped by a cgroup CPU quota."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    try:
        with open("/sys/fs/cgroup/cpu.max") as quota_file:
            quota, period = quota_file.read().split()
        if quota != "max":
            cores = min(cores, max(1, int(int(quota) // int(period))))
    except (OSError, ValueError):
        pass
    return cores


def _busy_and_total_ticks() -> tuple[int, int, int] | None:
    """(busy ticks, all ticks, cpus) of the whole machine from /proc/stat, or None where there is none."""
    try:
        with open("/proc/stat") as stat:
            lines = stat.read().splitlines()
    except OSError:
        return None
    fields = [int(value) for value in lines[0].split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    total = sum(fields[:8])  # guest time is already counted in user
    cpus = sum(1 for line in lines if line.startswith("cpu") and line[3:4].isdigit())
    return total - idle, total, max(cpus, 1)


def cores_busy_elsewhere(seconds: float = _SAMPLE_SECONDS) -> float:
    """How many cores other processes keep busy, sampled over ``seconds`` (0 where unknown)."""
    before = _busy_and_total_ticks()
    if before is None:
        return 0.0
    own_before, wall_before = time.process_time(), time.perf_counter()
    time.sleep(seconds)
    after = _busy_and_total_ticks()
    own_cores = (time.process_time() - own_before) / max(time.perf_counter() - wall_before, 1e-9)
    if after is None or after[1] <= before[1]:
        return 0.0
    busy_cores = (after[0] - before[0]) / (after[1] - before[1]) * after[2]
    return max(busy_cores - own_cores, 0.0)


#: More threads than any machine here has cores; torch takes a 32-bit count.
MAX_THREADS = 1024
#: The multiply-adds of one update from which a second thread may pay. Measured on 2 idle cores
#: (benchmarks.threads --crossover --sections, benchmarks/RESULTS.md "Threads that pay"): updates alone
#: cross over between 109M and 217M (an MLP) and 172M and 343M (the Nature CNN); whole runs, whose
#: acting calls and env steps a second thread cannot speed, were faster on one thread for every shipped
#: section, even at 398M (0.99x).
SECOND_THREAD_FROM = 500_000_000
#: The update work of a command that only plays (evaluate, league, record): none, a small forward pass a step.
PLAYING_ONLY = 0


def parse_threads(value: str) -> int | None:
    """``--threads``: "auto" (None) or a count >= 1."""
    if value == "auto":
        return None
    try:
        count = int(value)
    except ValueError:
        count = 0
    if not 1 <= count <= MAX_THREADS:
        raise UsageError(f"--threads must be 'auto' or a whole number in 1..{MAX_THREADS}, got {value!r}")
    return count


def threads_flag(value: str) -> str:
    """argparse's ``type`` for ``--threads``: the value as given, once it parses (so that a bad
    one is refused with the other flags, before any input is read)."""
    try:
        parse_threads(value)
    except UsageError as error:
        raise argparse.ArgumentTypeError(str(error).removeprefix("--threads ")) from None
    return value


def choose_threads(requested: str, update_work: int | None = None) -> tuple[int, str]:
    """The thread count for ``--threads`` and why: the number asked for, ``OMP_NUM_THREADS``, or
    the cores free now, but one where ``update_work`` (an update's multiply-adds; 0 for a command
    that only plays, a small forward pass a step) is below what a second thread pays for."""
    count = parse_threads(requested)
    if count is not None:
        return count, "--threads"
    from_env = os.environ.get("OMP_NUM_THREADS", "")
    if from_env.isdigit() and int(from_env) >= 1:
        return int(from_env), "OMP_NUM_THREADS"
    if update_work is not None and update_work < SECOND_THREAD_FROM:
        work = f"an update of {update_work / 1e6:,.0f}M multiply-adds" if update_work else "playing games"
        return 1, f"auto: {work} is faster on one"
    cores = usable_cores()
    free = min(cores, max(1, round(cores - cores_busy_elsewhere())))
    return free, f"{free} of {cores} cores free"


def apply_threads(requested: str, update_work: int | None = None) -> str:
    """Set torch's CPU threads for ``--threads`` (see :func:`choose_threads`); returns the
    choice in words, for the line a command prints beside its device."""
    import torch

    count, why = choose_threads(requested, update_work)
    torch.set_num_threads(count)
    wait = os.environ.get(WAIT_POLICY_VAR, "spinning").lower()
    return f"{count} thread{'s' if count != 1 else ''} ({why}, {wait} waits)"
