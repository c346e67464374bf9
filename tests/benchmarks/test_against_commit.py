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


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--commit", "no-such-commit"], "'no-such-commit' is not a commit"),
        (["--pairs", "0"], "--pairs must be at least 1, got 0"),
    ],
)
def test_bad_flags_are_named_before_any_worktree(flags, message, capsys):
    worktrees_before = against_commit.worktrees()
    from tests.helpers import refused

    assert message in refused(capsys, against_commit.main, flags)  # one line, exit 2, as every command
    assert against_commit.worktrees() == worktrees_before
