"""Speed and learning benchmarks; figures go to benchmarks/RESULTS.md. Not tests: nothing here passes or fails."""
