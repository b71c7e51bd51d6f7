"""Plugins for the ``lbp dev`` tests: a scaffolded one and the third-party ``toolbox``."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

from tests.cli.helpers import lbp

HERE = Path(__file__).resolve().parent
TOOLBOX = HERE / "plugins" / "toolbox"

#: The model asks for the add tool, then answers (the second reply repeats after that).
ADD_SCRIPT: list[Any] = [
    {"content": "", "tool_calls": [{"name": "add", "arguments": {"a": 2, "b": 40}}]},
    "The sum is 42, as the add tool says.",
]


def toolbox(into: Path) -> Path:
    """A copy of the toolbox plugin (the tests edit their copy)."""
    target = into / "toolbox"
    shutil.copytree(TOOLBOX, target, ignore=shutil.ignore_patterns("__pycache__", ".lbp-dev"))
    return target


def scaffolded(into: Path) -> Path:
    """A plugin made the way an author starts one: ``lbp init`` + ``lbp comp AgentRunner``."""
    done = lbp("init", "starter", "--author", "me", "-y", "--no-git", cwd=into)
    assert done.code == 0, done.err
    folder = into / "starter"
    done = lbp("comp", "AgentRunner", "--name", "chat", "-y", cwd=folder)
    assert done.code == 0, done.err
    return folder


def write_script(folder: Path, replies: list[Any], name: str = "script.json") -> Path:
    path = folder / name
    path.write_text(json.dumps(replies), encoding="utf-8")
    return path
