"""benchmarks.silence measures what it says: the longest stretch without a line, a command stopped
at its limit, and its exit."""

from __future__ import annotations

from benchmarks.silence import silence


def test_the_longest_silence_covers_the_pause_between_two_lines(tmp_path):
    result = silence(["-c", "import time; print(1, flush=True); time.sleep(1.0); print(2)"], tmp_path, 120)
    assert result["exit"] == 0 and not result["stopped"]
    # The silence is timed from when the reader sees each line: on a loaded machine it saw the first
    # late and timed 0.289 s of a 0.3 s pause; half the pause leaves room for that.
    assert result["longest_silence_s"] >= 0.5


def test_a_command_past_the_limit_is_stopped_and_its_silence_counts_to_the_stop(tmp_path):
    result = silence(["-c", "import time; print(1, flush=True); time.sleep(600)"], tmp_path, 0.5)
    assert result["stopped"]
    assert result["longest_silence_s"] > 0
    assert result["seconds"] < 600
