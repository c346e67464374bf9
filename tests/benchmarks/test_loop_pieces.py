"""benchmarks.loop_pieces: every piece of our DQN's vector step is timed, and the bound follows from them."""

from __future__ import annotations

import pytest

from benchmarks.loop_pieces import pieces


@pytest.mark.slow
def test_the_bound_is_the_floor_over_the_floor_and_the_rest_of_the_loop():
    result = pieces("UAVGrid-v0", steps=320, device="cpu")
    timed = ("act", "env step", "buffer add", "buffer sample", "update (one fixed batch)", "the loop")
    assert all(result[name] > 0 for name in timed)
    floor = result["act"] + result["update (one fixed batch)"]  # UAVGrid-v0: one update a vector step
    rest = result["the loop, updates skipped"] - result["act"]
    assert result["bound (floor / (floor + rest))"] == pytest.approx(floor / (floor + rest))
    assert result["the loop's fraction (floor / the loop)"] == pytest.approx(floor / result["the loop"])
