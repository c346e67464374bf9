"""What a long command shows while it runs (a training run's steps, the games a league, an
exploiter or a recording plays): a progress bar in a terminal, a plain progress line every
:data:`PLAIN_EVERY_S` seconds when the output goes to a file or a pipe (``2> log``, a job
scheduler), and its own lines (a run's evaluations, a table's rows) in both. ``--no-progress``
drops the progress.

Standard output holds a command's results alone (``agents.evaluate ... | tee results.md`` is the
table): the progress and the notes along the way (the device, a resumed step, a setting not
applied: :func:`agents.common.errors.note`) go to standard error, as pip's and curl's do.

The time left is estimated from the rate since learning started: the warm-up steps before
``learning_starts`` run an order of magnitude faster than learning ones, so a rate taken over
them promises minutes where hours remain. Before learning starts the estimate says so.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import IO, Any, TypeVar

#: Seconds between plain progress lines when the output is not a terminal: no command is silent for
#: 10 s, with a second to spare for a step or a look that comes late.
PLAIN_EVERY_S = 9.0
# Seconds of learning before the time left is estimated: a few updates pass first.
_ESTIMATE_AFTER_S = 3.0


def duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 90 * 60:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def counting_from(update: Callable[[int], None] | None, done: int) -> Callable[[int], None] | None:
    """The update of one part of the work, which counts its own: ``done`` were counted before it
    (None: nobody watches)."""
    return None if update is None else (lambda count: update(done + count))


class Console:
    """Progress of a run from ``start_steps`` to ``start_steps + total`` env steps (or of any
    count: ``unit`` names one, "game" for a command that plays games).

    ``update(steps)`` is cheap enough for every step: it redraws at most a few times a second, on
    ``stream`` (standard error). ``write(text)`` prints a line of the results on ``results``
    (standard output; above the bar in a terminal). ``close()`` is idempotent.
    ``enabled=False`` (``--no-progress``) keeps the results and drops the progress.
    """

    def __init__(
        self,
        total: int,
        start_steps: int = 0,
        learning_starts: int = 0,
        enabled: bool = True,
        stream: IO[str] | None = None,
        results: IO[str] | None = None,
        plain_every: float | None = None,  # None: PLAIN_EVERY_S
        unit: str = "step",
    ) -> None:
        self.stream = stream or sys.stderr
        self.results = results or sys.stdout
        self.total, self.start_steps, self.end = total, start_steps, start_steps + total
        self.learning_starts = learning_starts
        self.enabled = enabled
        self.tty = self.stream.isatty()
        self.plain_every = PLAIN_EVERY_S if plain_every is None else plain_every
        self.unit = unit
        self._start = time.monotonic()
        self._learning_since: tuple[float, int] | None = None
        self._bar: Any = None
        if enabled and self.tty:
            from tqdm import tqdm

            self._bar = tqdm(
                total=total,
                unit=f"{unit}s",
                file=self.stream,
                dynamic_ncols=True,
                bar_format="{l_bar}{bar}| {n_fmt}/{total_fmt} {postfix}",
            )
        self._next_draw = 0.0  # the first update draws: a log shows at once that the work began

    def time_left(self, steps: int, now: float) -> str:
        if self._learning_since is None:
            return f"time left: estimating (learning starts at {self.learning_starts:,} steps)"
        since, at = self._learning_since
        if now - since < _ESTIMATE_AFTER_S or steps <= at:
            return "time left: estimating"
        rate = (steps - at) / (now - since)
        left = duration((self.end - steps) / rate)
        if rate < 0.1:  # a benchmark's measurements, a study's trials: minutes apiece
            return f"{rate * 60:.1f} {self.unit}s/min, about {left} left"
        return f"{rate:,.{0 if rate >= 10 else 1}f} {self.unit}s/s, about {left} left"

    def update(self, steps: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if steps >= self.learning_starts and self._learning_since is None:
            self._learning_since = (now, steps)
        if now < self._next_draw:
            return
        left = self.time_left(steps, now)
        if self._bar is not None:
            self._bar.n = min(steps - self.start_steps, self.total)
            self._bar.set_postfix_str(left, refresh=True)
            self._next_draw = now + 0.25
        else:
            done = steps - self.start_steps
            print(
                f"{self.unit} {steps:,} of {self.end:,} ({done / self.total:.0%}), {duration(now - self._start)} in; {left}",
                file=self.stream,
                flush=True,
            )
            self._next_draw = now + self.plain_every

    def write(self, text: str) -> None:
        if self._bar is not None:
            self._bar.write(text, file=self.results)  # clears the bar, prints, draws it again
        else:
            print(text, file=self.results, flush=True)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


@contextlib.contextmanager
def every(seconds: float, call: Callable[[], None]) -> Iterator[None]:
    """``call()`` every ``seconds`` on a thread of its own while the body runs: what keeps the
    progress of one long piece of work coming (a benchmark's measurement, a study's trial) while
    the work itself reports nothing. The thread sleeps in between, so the work does not notice it."""
    stop = threading.Event()

    def tick() -> None:
        while not stop.wait(seconds):
            call()

    thread = threading.Thread(target=tick, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


TickingType = TypeVar("TickingType", bound="Ticking")


class Ticking:
    """Progress over ``total`` pieces of work that each take a while (a benchmark's measurements, a
    comparison's final models scored): a :class:`Console` looked at once a second by a thread of
    its own (:func:`every`), so that its plain lines keep coming while one piece runs. ``result``
    counts a piece done and prints its line; ``write`` prints a line of the results. A context
    manager."""

    def __init__(self, total: int, unit: str, enabled: bool = True) -> None:
        self.console = Console(max(total, 1), unit=unit, enabled=enabled)
        self.done = 0
        self._lock = threading.Lock()  # the console is drawn from the caller's thread and the ticker's
        self._ticking = every(1.0, self._tick) if enabled else contextlib.nullcontext()

    def __enter__(self: TickingType) -> TickingType:
        self._ticking.__enter__()
        return self

    def __exit__(self, *exc: object) -> None:
        self._ticking.__exit__(None, None, None)
        with self._lock:
            self.console.close()

    def _tick(self) -> None:
        with self._lock:
            self.console.update(self.done)

    def write(self, line: str) -> None:
        with self._lock:
            self.console.write(line)

    def result(self, line: str | None = None) -> None:
        """One piece done, and its line (if any)."""
        with self._lock:
            self.done += 1
            if line is not None:
                self.console.write(line)
            self.console.update(self.done)
