"""Speed and learning benchmarks; figures go to benchmarks/RESULTS.md. Not tests: nothing here passes or fails."""

# Imported first, while ``python -m benchmarks.X`` starts: the package sets a command's threads
# (numpy's BLAS on one, torch's idle threads asleep) as it does for ``python -m agents.X``.
import agents  # noqa: F401
