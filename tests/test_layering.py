"""Imports flow one way: rpc <- entities <- protocol <- api <- worker/runtime/host <- cli.

``entities`` is ``langbot_plugin.api.entities``: the plugin API's data models (messages,
run records, contexts), which the action catalogue in ``protocol`` uses as its wire
types; they import nothing above ``rpc``. ``box_runtime`` may use ``langbot_plugin.rpc``
and ``langbot_plugin.protocol`` only. A module that imports
a layer above its own (or a sibling daemon package) fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
RANK = {
    "rpc": 0,
    "entities": 1,
    "protocol": 2,
    "api": 3,
    "worker": 4,
    "runtime": 4,
    "host": 4,
    "cli": 5,
}
SIBLINGS = {"worker", "runtime", "host"}
# Modules directly under langbot_plugin/ that are not layers: the version module sits at the
# bottom, the author test harness and the demo at the top.
TOP_LEVEL_RANK = {"__init__": 0, "testing": 5, "demo": 5, "__main__": 5}


def layer_of(module: str) -> tuple[str, str | None]:
    parts = module.split(".")
    if parts[0] == "box_runtime":
        return "box_runtime", None
    if parts[0] != "langbot_plugin":
        return "external", None
    if parts[1:3] == ["api", "entities"]:
        return "langbot_plugin", "entities"
    return "langbot_plugin", parts[1] if len(parts) > 1 else "__init__"


def imported_modules(path: Path, module: str) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rsplit(".", 1)[0]
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            found.append((node.lineno, name))
    return found


def rank(sub: str | None) -> int:
    if sub is None:
        return 0
    if sub in RANK:
        return RANK[sub]
    return TOP_LEVEL_RANK.get(sub, 5)


def violations() -> list[str]:
    problems: list[str] = []
    for path in sorted([*ROOT.glob("langbot_plugin/**/*.py"), *ROOT.glob("box_runtime/**/*.py")]):
        rel = path.relative_to(ROOT).with_suffix("")
        module = ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)
        owner, sub = layer_of(module)
        for line, target in imported_modules(path, module):
            t_owner, t_sub = layer_of(target)
            where = f"{rel}.py:{line} imports {target}"
            if owner == "box_runtime":
                if t_owner == "langbot_plugin" and t_sub not in ("rpc", "protocol"):
                    problems.append(f"{where} (box_runtime may use only rpc and protocol)")
                continue
            if t_owner == "box_runtime" and sub not in ("cli", "demo", "testing", "dev"):
                problems.append(f"{where} (only the CLI may start the Box runtime)")
            if t_owner != "langbot_plugin" or t_sub == sub:
                continue
            if rank(t_sub) > rank(sub):
                problems.append(f"{where} (upward: {sub} -> {t_sub})")
            elif sub in SIBLINGS and t_sub in SIBLINGS:
                problems.append(f"{where} (sibling daemons must not import each other)")
    return problems


def test_imports_flow_one_way() -> None:
    assert violations() == []


def test_the_checker_catches_an_upward_import(tmp_path: Path) -> None:
    fake = tmp_path / "mod.py"
    fake.write_text("from langbot_plugin.cli import main\n", encoding="utf-8")
    targets = imported_modules(fake, "langbot_plugin.rpc.mod")
    assert targets == [(1, "langbot_plugin.cli")]
    assert rank(layer_of(targets[0][1])[1]) > rank("rpc")


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        ("langbot_plugin.rpc.x", "from ..protocol import a", "langbot_plugin.protocol"),
        ("langbot_plugin.api.y", "from . import z", "langbot_plugin.api"),
    ],
)
def test_relative_imports_resolve(tmp_path: Path, module: str, source: str, expected: str) -> None:
    fake = tmp_path / "m.py"
    fake.write_text(source + "\n", encoding="utf-8")
    assert imported_modules(fake, module)[0][1] == expected
