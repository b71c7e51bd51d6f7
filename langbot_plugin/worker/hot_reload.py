"""Noticing edits in a plugin folder: any added, removed or changed file.

Polling a snapshot of (path, mtime, size) is cheap for a plugin folder, needs no
extra dependency, and sees what event-based watchers of the reference missed: new
files and YAML manifests as well as Python code.
"""

from __future__ import annotations

import os
from pathlib import Path

import anyio

__all__ = ["IGNORED_DIRS", "snapshot", "wait_for_change"]

IGNORED_DIRS = frozenset(
    {
        ".git",
        ".venv",
        "venv",
        "__pycache__",
        "node_modules",
        ".pytest_cache",
        ".mypy_cache",
        ".ruff_cache",
        "dist",
        "build",
        "data",
        ".idea",
        ".vscode",
    }
)
IGNORED_SUFFIXES = (".pyc", ".pyo", ".lbpkg", ".swp", "~")

Snapshot = dict[str, tuple[int, int]]


def snapshot(root: Path) -> Snapshot:
    found: Snapshot = {}
    for directory, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d not in IGNORED_DIRS and not d.startswith(".")]
        for name in files:
            if name.endswith(IGNORED_SUFFIXES) or name.startswith(".#"):
                continue
            path = Path(directory, name)
            try:
                info = path.stat()
            except OSError:
                continue
            found[str(path.relative_to(root))] = (info.st_mtime_ns, info.st_size)
    return found


async def wait_for_change(root: Path, *, interval: float = 0.5, settle: float = 0.3) -> list[str]:
    """Return the changed paths once the folder changed and stayed quiet for ``settle`` s."""
    before = await anyio.to_thread.run_sync(snapshot, root)
    while True:
        await anyio.sleep(interval)
        now = await anyio.to_thread.run_sync(snapshot, root)
        if now == before:
            continue
        while True:  # let an editor finish writing before reloading
            await anyio.sleep(settle)
            latest = await anyio.to_thread.run_sync(snapshot, root)
            if latest == now:
                break
            now = latest
        return sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
