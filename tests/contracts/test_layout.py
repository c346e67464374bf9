"""The house's import rules (CONTRIBUTING, "The house"): ballenvs never imports agents or torch, the
rooms of agents import only downwards, and nothing imports a command line."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import REPO as ROOT

COMMAND_LINES = {"sb3_train", "custom_train", "evaluate", "compare", "league", "tune", "exploit", "export_champion"}
#: room -> the rooms of agents it may import.
MAY_IMPORT = {
    "common": set(),
    "sb3": {"common"},
    "custom": {"common"},
    "twoplayer": {"common"},
    "commands": {"common", "sb3", "custom", "twoplayer"},
}


def imported_modules(path: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found |= {node.module} | {f"{node.module}.{alias.name}" for alias in node.names}
    return found


def room_of(path: Path) -> str:
    parts = path.relative_to(ROOT / "agents").parts
    return parts[0] if len(parts) > 1 else "commands"


@pytest.mark.parametrize("path", sorted((ROOT / "ballenvs").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_ballenvs_imports_neither_agents_nor_torch(path):
    heavy = {m for m in imported_modules(path) if m.split(".")[0] in ("agents", "torch", "stable_baselines3")}
    assert not heavy, f"{path} imports {sorted(heavy)}"


@pytest.mark.parametrize("path", sorted((ROOT / "agents").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_rooms_of_agents_import_only_downwards(path):
    room = room_of(path)
    for module in imported_modules(path):
        parts = module.split(".")
        if parts[0] != "agents" or len(parts) < 2:
            continue
        assert parts[1] not in COMMAND_LINES, f"{path} imports the command line {module}"
        if parts[1] in MAY_IMPORT and parts[1] != room:
            assert parts[1] in MAY_IMPORT[room], f"{path} ({room}) imports {module}"
