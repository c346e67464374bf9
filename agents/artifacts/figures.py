"""The figures the commands draw: matplotlib without a display, and a PNG written to a temporary
name and renamed into place. Each figure is built by a function that returns it, so that a test
can read what was drawn (tests/agents/artifacts/test_figures.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agents.artifacts.runs import atomic_path


def pyplot() -> Any:
    """matplotlib's pyplot on the Agg backend (no window: the commands run headless)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_png(fig: Any, path: Path, dpi: int = 110) -> None:
    """``fig`` as a PNG at ``path``, written atomically, then closed."""
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=dpi)
    pyplot().close(fig)
