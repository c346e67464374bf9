"""A stop that Python drops on the way (raised inside a finalizer) still stops the next training loop,
says nothing on stderr meanwhile, and belongs to the command it came to alone."""

from __future__ import annotations

import signal
import sys

import pytest

from agents.common.stops import stopping_between_steps, stopping_on_signals
from tests.helpers import StoppedWhileFinalised


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_a_stop_dropped_in_a_finalizer_is_noted_by_the_next_training_loop(signum, monkeypatch):
    printed: list[type] = []  # what reaches the hook that prints "Exception ignored in ..."
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: printed.append(unraisable.exc_type))
    with stopping_on_signals():
        StoppedWhileFinalised(signum)  # collected at once: the stop is raised in __del__ and dropped
        assert printed == []
        with stopping_between_steps() as stop:
            pass
        assert stop.signum == signum
        with pytest.raises(KeyboardInterrupt):
            stop.raise_if_stopped()


def test_a_dropped_stop_belongs_to_its_command_alone():
    with stopping_on_signals():
        StoppedWhileFinalised(signal.SIGTERM)
    with stopping_on_signals(), stopping_between_steps() as stop:
        pass
    assert stop.signum is None


def test_other_exceptions_python_drops_are_still_printed(monkeypatch):
    printed: list[type] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda unraisable: printed.append(unraisable.exc_type))
    with stopping_on_signals():
        FailsWhileFinalised()
    assert printed == [ZeroDivisionError]


class FailsWhileFinalised:
    def __del__(self) -> None:
        raise ZeroDivisionError("a finalizer that fails")


def test_a_training_loop_with_no_stop_before_it_notes_none():
    with stopping_on_signals(), stopping_between_steps() as stop:
        pass
    assert stop.signum is None
