"""benchmarks.against_commit: both trees step the same env in their own processes and the ratio is printed."""

from __future__ import annotations

import pytest

from benchmarks import against_commit


@pytest.mark.slow
def test_a_tree_against_its_own_commit_steps_both_and_leaves_no_worktree(capsys):
    worktrees_before = against_commit.worktrees()
    against_commit.main(["--commit", "HEAD", "--pairs", "1", "--rounds", "1", "--steps", "3", "--envs", "2"])
    out = capsys.readouterr().out
    assert "2 envs, state observation, 1 pairs" in out
    assert "median of the pairs' ratios (this tree / HEAD): " in out
    assert against_commit.worktrees() == worktrees_before
