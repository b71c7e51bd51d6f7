"""Hot reload for ``lbp run``: noticing edits, and loading a new version beside the old.

Polling a snapshot of (path, mtime, size) is cheap for a plugin folder, needs no
extra dependency, and sees what event-based watchers of the reference missed: new
files and YAML manifests as well as Python code. A :class:`FolderWatcher` remembers
what it last reported, so an edit made while ``lbp run`` reconnects is not lost.

:func:`load_candidate` reads and imports the edited folder while the previous version
keeps serving: a broken edit (a syntax error, a bad manifest, a failing import) is a
:class:`ReloadError` whose :meth:`~ReloadError.block` is one readable block (each
problem with its file, line and source line), and the previous version's modules
are put back as they were.
"""

from __future__ import annotations

import linecache
import os
import sys
import traceback
from pathlib import Path
from types import ModuleType

import anyio

from langbot_plugin.api.definition.discovery import ManifestError
from langbot_plugin.api.definition.validation import check_plugin
from langbot_plugin.api.definition.yaml_document import Problem
from langbot_plugin.worker.loader import LoadedPlugin, forget_modules

__all__ = [
    "IGNORED_DIRS",
    "FolderWatcher",
    "ReloadError",
    "load_candidate",
    "restore_modules",
    "snapshot",
]

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


class FolderWatcher:
    """Reports the files changed since the last report (or since it was created)."""

    def __init__(self, root: Path, *, interval: float = 0.5, settle: float = 0.3) -> None:
        self.root = root
        self.interval = interval
        self.settle = settle
        self.seen: Snapshot = snapshot(root)

    async def changed(self) -> list[str]:
        """Wait until the folder differs from the last report and stays quiet ``settle`` s."""
        while True:
            now = await anyio.to_thread.run_sync(snapshot, self.root)
            if now != self.seen:
                while True:  # let an editor finish writing before reloading
                    await anyio.sleep(self.settle)
                    latest = await anyio.to_thread.run_sync(snapshot, self.root)
                    if latest == now:
                        break
                    now = latest
                before, self.seen = self.seen, now
                return sorted(k for k in set(before) | set(now) if before.get(k) != now.get(k))
            await anyio.sleep(self.interval)


class ReloadError(Exception):
    """An edited plugin folder cannot be loaded; ``problems`` says where and why."""

    def __init__(self, root: Path, problems: list[Problem]) -> None:
        super().__init__("; ".join(str(p) for p in problems))
        self.root = root
        self.problems = problems

    def block(self) -> str:
        """The problems, one per line, each followed by its source line when known."""
        lines: list[str] = []
        for problem in self.problems:
            lines.append(f"  {problem}")
            if problem.file and problem.line:
                path = str(self.root / problem.file)
                linecache.checkcache(path)  # the file as saved now, not as first read
                source = linecache.getline(path, problem.line)
                if source.strip():
                    lines.append(f"      {source.strip()}")
        return "\n".join(lines)


def _import_problem(root: Path, exc: BaseException) -> Problem:
    """Where in the plugin's own files an import failed (the deepest frame inside it)."""
    cause = exc.__cause__ or exc
    if isinstance(cause, SyntaxError) and cause.filename:
        where = Path(cause.filename)
        if where.is_relative_to(root):
            rel = where.relative_to(root).as_posix()
            return Problem(rel, cause.lineno, f"syntax error: {cause.msg}")
    frames = [
        frame
        for frame in traceback.extract_tb(cause.__traceback__)
        if Path(frame.filename).resolve().is_relative_to(root)
    ]
    text = f"{type(cause).__name__}: {cause}"
    if frames:
        frame = frames[-1]
        rel = Path(frame.filename).resolve().relative_to(root).as_posix()
        return Problem(rel, frame.lineno, text)
    return Problem("", None, text)


def restore_modules(root: Path, modules: dict[str, ModuleType]) -> None:
    """Put back the modules of an earlier version of ``root`` (forgetting the newer)."""
    forget_modules(root)
    sys.modules.update(modules)


def load_candidate(root: Path) -> LoadedPlugin:
    """The plugin in ``root`` as it is now, imported; raises :class:`ReloadError`.

    The modules of the version currently serving are set aside while the new files
    are imported, and put back if that fails, so the old version keeps working.
    """
    root = root.resolve()
    _, problems = check_plugin(root)
    if problems:
        raise ReloadError(root, problems)
    previous = forget_modules(root)
    try:
        candidate = LoadedPlugin(root)
        candidate.replaced_modules = previous
        candidate.preload()
    except Exception as exc:
        restore_modules(root, previous)
        if isinstance(exc, ManifestError) and exc.__cause__ is None:
            problems = exc.problems  # e.g. an entry class of the wrong base
        else:
            problems = [_import_problem(root, exc)]
        raise ReloadError(root, problems) from exc
    return candidate
