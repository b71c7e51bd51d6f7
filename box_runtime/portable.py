"""What the Box asks of POSIX-only modules, with the fallback where they are missing.

The released LangBot host imports the skill store and the Box client on every
platform it runs on, Windows included, and ``lbp box`` serves the Docker and E2B
backends there; so no module of this project imports ``fcntl``, ``pwd``, ``grp``,
``resource`` or ``termios`` at module level (``tests/test_posix_free_imports.py``
imports every one with those hidden). The few uses go through here or import the
module where a POSIX-only backend needs it:

* :func:`file_lock`: an exclusive advisory lock (``flock``) on an open file, released
  by the system when the process ends; where ``fcntl`` is missing, nothing (the
  caller's lock within the process still holds: one writer per process);
* :func:`enlarge_pipe`: a bigger pipe buffer (Linux ``F_SETPIPE_SZ``); elsewhere the
  pipe keeps the size it has;
* :func:`missing_modules`: which of some modules this system lacks, for a backend
  that needs them to say why it cannot serve;
* :func:`effective_uid`: the process's effective uid, ``None`` where the system has
  no uids (Windows' ``os`` has no ``geteuid``).
"""

from __future__ import annotations

import contextlib
import importlib
import os
from collections.abc import Generator
from types import ModuleType
from typing import IO

__all__ = [
    "POSIX_ONLY",
    "effective_uid",
    "enlarge_pipe",
    "file_lock",
    "missing_modules",
    "optional_module",
]

#: The modules this project never imports at module level.
POSIX_ONLY = ("fcntl", "grp", "pwd", "resource", "termios")
_F_SETPIPE_SZ = 1031  # Linux fcntl


def optional_module(name: str) -> ModuleType | None:
    """The module ``name``, or ``None`` where this system has none."""
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def missing_modules(*names: str) -> list[str]:
    """Those of ``names`` this system cannot import."""
    return [name for name in names if optional_module(name) is None]


@contextlib.contextmanager
def file_lock(file: IO[bytes]) -> Generator[None]:
    """Hold an exclusive lock on ``file`` (see the module docstring)."""
    fcntl = optional_module("fcntl")
    if fcntl is None:
        yield
        return
    fcntl.flock(file.fileno(), fcntl.LOCK_EX)
    try:
        yield
    finally:
        fcntl.flock(file.fileno(), fcntl.LOCK_UN)


def enlarge_pipe(fd: int, size: int) -> None:
    """Ask for a pipe buffer of ``size`` bytes where the kernel allows it."""
    fcntl = optional_module("fcntl")
    if fcntl is not None:
        with contextlib.suppress(OSError):
            fcntl.fcntl(fd, _F_SETPIPE_SZ, size)


def effective_uid() -> int | None:
    """``os.geteuid()``, or ``None`` where the system has no uids."""
    geteuid = getattr(os, "geteuid", None)
    return None if geteuid is None else int(geteuid())
