"""Copies of ``bench/plugins/echotool`` under distinct names, for curves against plugins
loaded. Standard library only: the reference's drivers import it too.

Copy ``i`` is plugin ``bench/echotool<i>`` with the one tool ``echo_tool_<i>``, so every
copy registers beside the others and a call names exactly one of them.
"""

from __future__ import annotations

import shutil
from pathlib import Path

__all__ = ["AUTHOR", "fleet_copy", "identity", "tool_name"]

AUTHOR = "bench"


def identity(index: int) -> tuple[str, str]:
    return AUTHOR, f"echotool{index}"


def tool_name(index: int) -> str:
    return f"echo_tool_{index}"


def fleet_copy(source: Path, target: Path, index: int, env: str) -> Path:
    """Copy ``source`` to ``target`` renamed as copy ``index``; ``env`` is its ``.env``."""
    shutil.copytree(source, target)
    manifest = target / "manifest.yaml"
    manifest.write_text(
        manifest.read_text().replace("name: echotool\n", f"name: {identity(index)[1]}\n", 1)
    )
    tool = target / "components" / "tools" / "echo_tool.yaml"
    tool.write_text(tool.read_text().replace("name: echo_tool\n", f"name: {tool_name(index)}\n", 1))
    (target / ".env").write_text(env)
    return target
