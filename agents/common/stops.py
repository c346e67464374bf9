"""How the commands stop: Ctrl-C and the stop signals (SIGTERM, SIGUSR1) as exceptions the
command handles by saving what it has, and writes that a stop waits for instead of cutting in two.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Iterator
from typing import Any


class Stopped(KeyboardInterrupt):
    """A stop asked for by a signal other than Ctrl-C's: SIGTERM (what job schedulers send before
    they kill: SLURM, Kubernetes) or SIGUSR1 (SLURM's ``--signal`` to requeue). Handled as Ctrl-C:
    what was being trained is saved."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def signal_of(stop: BaseException) -> int:
    """The signal behind a KeyboardInterrupt: Ctrl-C's SIGINT, or a :class:`Stopped`'s."""
    return getattr(stop, "signum", signal.SIGINT)


def how_stopped(signum: int) -> str:
    """How a stop by ``signum`` is said: "interrupted" (Ctrl-C) or "stopped by SIGTERM"."""
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


class Interrupted(Exception):
    """Ctrl-C or a stop signal, after the command saved what it had: ``what`` says what and where
    (the interrupted model and how to resume it, a league's results so far, ...)."""

    def __init__(self, what: str, signum: int = signal.SIGINT) -> None:
        super().__init__(f"{how_stopped(signum)}: {what}")
        self.signum = signum


#: The signals a command stops on as it does on Ctrl-C, saving what it has.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGUSR1") if hasattr(signal, name))


class DeferredStop:
    """What :func:`deferring_stops` saw: the first stop signal that came during its block, if any."""

    signum: int | None = None

    def raise_if_stopped(self) -> None:
        """Stop the command as the signal seen would have: Ctrl-C's KeyboardInterrupt, or :class:`Stopped`."""
        if self.signum == signal.SIGINT:
            raise KeyboardInterrupt
        if self.signum is not None:
            raise Stopped(self.signum)


#: The last stop :func:`_stop` raised in the command now running. Raised where its exception is
#: dropped (a finalizer or a weakref callback, where Python prints "Exception ignored in ...", or C
#: code that clears errors, as some imports do) a stop would be lost and the command would run on:
#: the next training loop (:func:`stopping_between_steps`) starts with it noted, and
#: :func:`stopping_on_signals` keeps it off stderr.
_raised_stop = DeferredStop()


def _stop(signum: int, frame: Any) -> None:
    _raised_stop.signum = signum
    raise KeyboardInterrupt if signum == signal.SIGINT else Stopped(signum)


def _exit_while_starting(signum: int, frame: Any) -> None:
    os.write(2, f"{how_stopped(signum)} while starting: nothing was written\n".encode())
    os._exit(128 + signum)  # from inside an import: no exception may unwind it into a traceback


def exit_on_stops_while_starting() -> None:
    """``python -m agents.X`` spends its first seconds importing torch (many more on a busy
    machine), before any command handles a stop: a stop then exits at once, 128 + its signal and one
    line, as it would later. :func:`stopping_on_signals` hands the signals on to the command.
    Signals ignored already (a background job's Ctrl-C, nohup) stay ignored."""
    for signum in (signal.SIGINT, *STOP_SIGNALS):
        if signal.getsignal(signum) != signal.SIG_IGN:
            signal.signal(signum, _exit_while_starting)


def ignore_stops() -> None:
    """Let no further Ctrl-C or stop signal cut short what the command does on its way out (saving)."""
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGINT, *STOP_SIGNALS):
            signal.signal(signum, signal.SIG_IGN)


@contextlib.contextmanager
def stopping_on_signals() -> Iterator[None]:
    """SIGTERM and SIGUSR1 raise :class:`Stopped` while the block runs (in the main thread), and
    Ctrl-C its KeyboardInterrupt (unless a shell that started us in the background ignores it)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {signum: signal.signal(signum, _stop) for signum in STOP_SIGNALS}
    if signal.getsignal(signal.SIGINT) in (_exit_while_starting, signal.default_int_handler):
        previous[signal.SIGINT] = signal.signal(signal.SIGINT, _stop)
    raised_before, unraisable_hook = _raised_stop.signum, sys.unraisablehook

    def quiet_about_stops(unraisable: Any) -> None:  # a stop dropped there is noted, and answered later
        dropped = unraisable.exc_type
        if _raised_stop.signum is None or dropped is None or not issubclass(dropped, KeyboardInterrupt):
            unraisable_hook(unraisable)

    sys.unraisablehook = quiet_about_stops
    try:
        yield
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        _raised_stop.signum = raised_before
        sys.unraisablehook = unraisable_hook


@contextlib.contextmanager
def deferring_stops() -> Iterator[DeferredStop]:
    """Ctrl-C and the stop signals wait until the block (a command's final write) is done: the
    caller then finds the signal in the yielded :class:`DeferredStop` and exits as it asks."""
    seen = DeferredStop()
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def note(signum: int, frame: Any) -> None:
        seen.signum = seen.signum or signum

    note.defers_stops = True  # type: ignore[attr-defined]  # what stops_wait_for_block looks for
    previous = {signum: signal.signal(signum, note) for signum in (signal.SIGINT, *STOP_SIGNALS)}
    try:
        yield seen
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


@contextlib.contextmanager
def stops_wait_for_block() -> Iterator[None]:
    """A write a stop must not cut in two (a checkpoint inside torch's zip writer, a replay
    buffer): Ctrl-C and the stop signals wait for the block, then stop the command as they would
    have. Where stops are ignored already (a command saving on its way out) it changes nothing."""
    # SIGTERM's handler says what stops do now (SIGINT's may be ignored by a shell that started us in the background).
    handler = signal.getsignal(signal.SIGTERM) if threading.current_thread() is threading.main_thread() else None
    if handler is None or handler == signal.SIG_IGN or getattr(handler, "defers_stops", False):
        yield  # not the main thread, stops ignored, or deferred already by the caller
        return
    with deferring_stops() as stop:
        yield
    stop.raise_if_stopped()


@contextlib.contextmanager
def stopping_between_steps() -> Iterator[DeferredStop]:
    """A training loop's stops, at the end of a step: the first Ctrl-C or stop signal is noted in
    the yielded :class:`DeferredStop`, which the loop reads after each step (everything it holds
    then is whole, so the interrupted model goes on exactly); a second one stops at once, for a
    step that never ends (a hung worker process). A stop raised earlier in the command and lost on
    the way (see :data:`_raised_stop`) is noted from the start."""
    seen = DeferredStop()
    seen.signum = _raised_stop.signum
    if threading.current_thread() is not threading.main_thread():
        yield seen
        return

    def note(signum: int, frame: Any) -> None:
        second = seen.signum is not None
        seen.signum = signum
        if second:
            seen.raise_if_stopped()

    note.defers_stops = True  # type: ignore[attr-defined]  # a checkpoint written at a step's end needs no deferral of its own
    signums = [signum for signum in (signal.SIGINT, *STOP_SIGNALS) if signal.getsignal(signum) != signal.SIG_IGN]
    previous = {signum: signal.signal(signum, note) for signum in signums}
    try:
        yield seen
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
