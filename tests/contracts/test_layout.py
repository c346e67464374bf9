"""The house's import rules (CONTRIBUTING, "The house"): ballenvs never imports agents or torch, the
rooms of agents import only downwards, nothing imports a command line, and no module reaches
itself through its imports, those inside functions included; and its tests
mirror its folders."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.helpers import REPO as ROOT

COMMAND_LINES = {
    "train",
    "sb3_train",
    "custom_train",
    "evaluate",
    "compare",
    "league",
    "tune",
    "exploit",
    "export_champion",
    "record",
}
#: room -> the rooms of agents it may import.
MAY_IMPORT = {
    "common": set(),
    "environments": {"common"},
    "artifacts": {"common", "environments"},
    "session": {"common", "environments", "artifacts"},
    "sb3": {"common", "environments", "artifacts", "session"},
    "algorithms": {"common", "environments", "artifacts", "session"},
    "twoplayer": {"common", "environments", "artifacts", "session"},
    "rllib": {"common", "environments", "artifacts", "session"},
    "trainer": {"common", "environments", "artifacts", "session", "sb3", "algorithms", "twoplayer", "rllib"},
    "studies": {"common", "environments", "artifacts", "session"},
    "commands": {
        "common",
        "environments",
        "artifacts",
        "session",
        "sb3",
        "algorithms",
        "twoplayer",
        "rllib",
        "trainer",
        "studies",
    },
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


#: The rooms of agents.common, bottom up ("": the ground, the files at its top): each imports only
#: itself and the rooms before it (CONTRIBUTING, "The house").
COMMON_ROOMS = ("", "networks", "configuration")


def common_room(parts: tuple[str, ...] | list[str]) -> str:
    """The room of agents.common a module's parts after ``agents.common`` name (a file: its path's)."""
    return parts[0] if len(parts) > 1 and parts[0] in COMMON_ROOMS else ""


@pytest.mark.parametrize("path", sorted((ROOT / "agents" / "common").rglob("*.py")), ids=lambda p: str(p.relative_to(ROOT)))
def test_the_rooms_of_common_import_only_downwards(path):
    room = COMMON_ROOMS.index(common_room(path.relative_to(ROOT / "agents" / "common").parts))
    for module in imported_modules(path):
        parts = module.split(".")
        if parts[:2] != ["agents", "common"] or len(parts) < 3:
            continue
        target = common_room(parts[2:])
        assert COMMON_ROOMS.index(target) <= room, f"{path} ({COMMON_ROOMS[room] or 'the ground'}) imports {module}"


def test_every_file_of_common_is_in_a_room():
    common = ROOT / "agents" / "common"
    folders = {p.parent.relative_to(common).as_posix() for p in common.rglob("*.py")}
    assert folders <= {".", *COMMON_ROOMS[1:]}, sorted(folders)


def _module_graph() -> dict[str, set[str]]:
    """Each module of both packages, and the modules of both it imports anywhere in its file."""
    files = {}
    for package in ("ballenvs", "agents"):
        for path in (ROOT / package).rglob("*.py"):
            name = ".".join(path.relative_to(ROOT).with_suffix("").parts)
            files[name.removesuffix(".__init__")] = path

    def module_of(name: str) -> str | None:  # a name imported from a module is that module's
        while name and name not in files:
            name = name.rpartition(".")[0]
        return name or None

    return {
        name: {m for m in map(module_of, imported_modules(path)) if m is not None and m != name}
        for name, path in files.items()
    }


def import_circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    circles = []

    def visit(module: str) -> None:
        index[module] = low[module] = len(index)
        stack.append(module)
        for other in sorted(graph[module]):
            if other not in index:
                visit(other)
                low[module] = min(low[module], low[other])
            elif other in stack:
                low[module] = min(low[module], index[other])
        if low[module] == index[module]:
            group = []
            while not group or group[-1] != module:
                group.append(stack.pop())
            if len(group) > 1:
                circles.append(sorted(group))

    for module in sorted(graph):
        if module not in index:
            visit(module)
    return circles


def test_the_circle_finder_finds_a_circle_through_three_modules_and_none_in_a_line():
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert import_circles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


def test_no_module_imports_itself_through_others_even_inside_a_function():
    assert import_circles(_module_graph()) == []


def test_no_two_modules_of_agents_share_a_file_name():
    """One meaning per name: a file name says which module it is wherever it is read (a traceback,
    an import, a search), so no two under agents/ share one (__init__ and __main__ aside)."""
    seen: dict[str, list[str]] = {}
    for path in sorted((ROOT / "agents").rglob("*.py")):
        if path.name not in ("__init__.py", "__main__.py"):
            seen.setdefault(path.name, []).append(str(path.relative_to(ROOT)))
    assert not {name: paths for name, paths in seen.items() if len(paths) > 1}


def test_the_tests_of_agents_mirror_its_folders():
    """A room's tests are where its code is: every folder of agents/ has its folder under tests/agents/."""
    folders = {
        path.relative_to(ROOT / "agents")
        for path in (ROOT / "agents").rglob("*")
        if path.is_dir() and path.name != "__pycache__"
    }
    assert sorted(str(f) for f in folders if not (ROOT / "tests" / "agents" / f).is_dir()) == []
