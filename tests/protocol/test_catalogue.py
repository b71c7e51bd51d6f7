"""The catalogue is the only place action names are written, and the docs follow it.

* Every action of the reference protocol (``tests/fixtures/reference/actions.md``) is
  declared in ``langbot_plugin.protocol`` (or ``box_runtime.protocol``), served by the
  session itself, or listed in ``NOT_SERVED`` with the reason.
* No other module writes a wire action name as a string literal: names come from the
  specs (``__all__`` lists of Python names aside, and two declared homes below).
* ``docs/protocol.md`` is exactly what ``python -m langbot_plugin.protocol.docs`` renders.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from pathlib import Path

from box_runtime.protocol import ALL_ACTIONS as BOX_ACTIONS
from langbot_plugin.protocol.catalogue import CATALOGUE, NOT_SERVED, RESERVED, SECTIONS
from langbot_plugin.protocol.docs import render

ROOT = Path(__file__).resolve().parent.parent.parent
REFERENCE = ROOT / "tests" / "fixtures" / "reference" / "actions.md"

#: Where a wire name may be written besides the catalogue, and why.
DECLARED_ELSEWHERE = {
    # the RPC core's own reserved actions: it serves them and knows no catalogue
    ("langbot_plugin/rpc/reserved.py", "__ping"),
    ("langbot_plugin/rpc/reserved.py", "__heartbeat"),
    ("langbot_plugin/rpc/reserved.py", "__stream_ack"),
    ("langbot_plugin/rpc/reserved.py", "__cancel_action"),
    ("langbot_plugin/rpc/reserved.py", "__file_chunk"),
    # a manifest permission value named after the action it grants (ModelOperation)
    ("langbot_plugin/api/entities/builtin/agent_runner/operations.py", "count_tokens"),
}


def reference_names() -> dict[str, list[str]]:
    """Section -> action names, from the reference facts."""
    sections: dict[str, list[str]] = {}
    current = ""
    for line in REFERENCE.read_text(encoding="utf-8").splitlines():
        if line.startswith("## "):
            current = line[3:].strip()
        elif match := re.match(r"^\| `([a-z_]+)` \|", line):
            sections.setdefault(current, []).append(match.group(1))
    return sections


def wire_names() -> set[str]:
    return {name for names in reference_names().values() for name in names}


def _all_nodes(tree: ast.Module) -> set[int]:
    """Nodes inside ``__all__ = [...]`` (Python names, not wire names)."""
    inside: set[int] = set()
    for node in ast.walk(tree):
        targets = (
            node.targets
            if isinstance(node, ast.Assign)
            else [node.target]
            if isinstance(node, ast.AnnAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            inside.update(id(child) for child in ast.walk(node))
    return inside


def literal_names(
    paths: list[Path], names: set[str], root: Path = ROOT
) -> list[tuple[str, int, str]]:
    """``(file, line, name)`` of every string literal that is a wire action name."""
    found: list[tuple[str, int, str]] = []
    for path in paths:
        rel = path.relative_to(root).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        skip = _all_nodes(tree)
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Constant)
                and isinstance(node.value, str)
                and node.value in names
                and id(node) not in skip
                and (rel, node.value) not in DECLARED_ELSEWHERE
            ):
                found.append((rel, node.lineno, node.value))
    return found


def source_files() -> list[Path]:
    files = [*ROOT.glob("langbot_plugin/**/*.py"), *ROOT.glob("box_runtime/**/*.py")]
    return sorted(
        p
        for p in files
        if not p.relative_to(ROOT).as_posix().startswith("langbot_plugin/protocol/")
        and p.relative_to(ROOT).as_posix() != "box_runtime/protocol.py"
    )


def test_no_action_name_is_written_outside_the_catalogue() -> None:
    assert literal_names(source_files(), wire_names()) == []


def test_the_scan_finds_a_name_written_by_hand(tmp_path: Path) -> None:
    stray = tmp_path / "stray.py"
    stray.write_text('__all__ = ["call_tool"]\nACTION = "call_tool"\n', encoding="utf-8")
    assert literal_names([stray], wire_names(), tmp_path) == [("stray.py", 2, "call_tool")]


def test_every_reference_action_is_declared_or_explained() -> None:
    declared = {name for spec in (*CATALOGUE, *BOX_ACTIONS) for name in spec.names}
    missing = wire_names() - declared - set(RESERVED) - set(NOT_SERVED)
    assert missing == set()
    assert not set(NOT_SERVED) & declared


def test_no_name_is_declared_twice_on_one_link() -> None:
    for section in SECTIONS:
        counts = Counter(name for spec in section.specs for name in spec.names)
        assert [name for name, n in counts.items() if n > 1] == [], section.title


def test_every_spec_says_who_calls_it() -> None:
    assert [spec.name for spec in CATALOGUE if spec.direction is None] == []


def test_the_protocol_docs_are_generated_from_the_catalogue() -> None:
    committed = (ROOT / "docs" / "protocol.md").read_text(encoding="utf-8")
    assert committed == render(), (
        "run: python -m langbot_plugin.protocol.docs --write docs/protocol.md"
    )
