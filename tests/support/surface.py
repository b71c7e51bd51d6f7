"""Compare a dumped reference surface with the ``langbot_plugin`` importable here.

The surfaces are JSON files written by ``tests/fixtures/surfaces/dump_surface.py`` under
a reference SDK's interpreter. ``missing(surface)`` lists what the reference offers and
this package does not, one line per module, name or class member.
``python -m tests.support.surface FILE...`` prints them with a count per file.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
from pathlib import Path
from typing import Any


def _has_member(cls: type, member: str) -> bool:
    if hasattr(cls, member):
        return True
    fields = getattr(cls, "model_fields", None)
    return isinstance(fields, dict) and member in fields


def missing(surface: dict[str, Any]) -> list[str]:
    problems: list[str] = []
    for module_name, entry in sorted(surface["modules"].items()):
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            problems.append(f"module {module_name} ({type(exc).__name__}: {exc})")
            continue
        for name in sorted(entry["names"]):
            if not hasattr(module, name):
                problems.append(f"name {module_name}.{name}")
        for class_name, members in sorted(entry["classes"].items()):
            cls = getattr(module, class_name, None)
            if not inspect.isclass(cls):
                continue
            problems.extend(
                f"member {module_name}.{class_name}.{member}"
                for member in members
                if not _has_member(cls, member)
            )
    return problems


SURFACES = Path(__file__).resolve().parents[1] / "fixtures" / "surfaces"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        found = missing(load(Path(arg)))
        for line in found:
            print(line)
        kinds = {k: sum(line.startswith(k) for line in found) for k in ("module", "name", "member")}
        print(f"{arg}: missing {kinds}", file=sys.stderr)
