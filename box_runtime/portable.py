"""What the Box asks of POSIX-only modules, with the fallback where they are missing.

No module of this project imports ``fcntl``, ``pwd``, ``grp``, ``resource`` or
``termios`` at module level (docs/box.md, *Windows*; ``tests/test_posix_free_imports.py``):
the few uses go through here (:func:`file_lock`, :func:`enlarge_pipe`,
:func:`missing_modules`, :func:`effective_uid`, the ``os.open`` flags that are 0 where
missing, :func:`open_no_link`) or import the module where a POSIX-only backend needs it.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import os
from collections.abc import Generator
from types import ModuleType
from typing import IO

__all__ = [
    "CLOEXEC",
    "DIRECTORY",
    "NOFOLLOW",
    "NONBLOCK",
    "POSIX_ONLY",
    "effective_uid",
    "enlarge_pipe",
    "file_lock",
    "missing_modules",
    "open_no_link",
    "optional_module",
]

#: The modules this project never imports at module level.
POSIX_ONLY = ("fcntl", "grp", "pwd", "resource", "termios")
_F_SETPIPE_SZ = 1031  # Linux fcntl
NOFOLLOW: int = getattr(os, "O_NOFOLLOW", 0)
NONBLOCK: int = getattr(os, "O_NONBLOCK", 0)
CLOEXEC: int = getattr(os, "O_CLOEXEC", 0)
DIRECTORY: int = getattr(os, "O_DIRECTORY", 0)
_BINARY: int = getattr(os, "O_BINARY", 0)  # Windows: no newline translation


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


def open_no_link(path: str, flags: int, mode: int = 0o777) -> int:
    """``os.open(path, flags, mode)`` for raw bytes, refusing a symbolic link as the last
    component.

    Where ``O_NOFOLLOW`` is missing (Windows, where making a link takes a privilege) the
    path is looked at first.
    """
    if NOFOLLOW:
        return os.open(path, flags | NOFOLLOW | _BINARY, mode)
    if os.path.islink(path):
        raise OSError(errno.ELOOP, "a symbolic link is refused", path)
    return os.open(path, flags | _BINARY, mode)
