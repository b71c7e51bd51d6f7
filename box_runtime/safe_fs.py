"""Link-free filesystem access to directories a sandbox can write to.

A sandbox controls the files in its workspace, ``/tmp`` and home, and the runtime
reaches them as root: from the host, or through ``/proc/<pid>/root``, where an
absolute symlink would resolve against the *host's* root. So below a trusted root
every step is opened with ``O_NOFOLLOW`` relative to the directory before it
(``openat``), files additionally with ``O_NONBLOCK`` (a FIFO can never hang the
reader), and what was opened is checked with ``fstat`` before it is used.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterable

from box_runtime.portable import CLOEXEC, DIRECTORY, NOFOLLOW, NONBLOCK

__all__ = ["DIR_FLAGS", "FILE_FLAGS", "open_dir", "open_dir_at", "open_file_at", "walk_to"]

DIR_FLAGS = os.O_RDONLY | DIRECTORY | NOFOLLOW | CLOEXEC
FILE_FLAGS = os.O_RDONLY | NOFOLLOW | NONBLOCK | CLOEXEC


def _at(name: str, flags: int, parent: int) -> int:
    if not NOFOLLOW:  # no link-free walk here (Windows): refuse rather than follow links
        raise OSError(errno.EOPNOTSUPP, "link-free file access needs O_NOFOLLOW", name)
    return os.open(name, flags, dir_fd=parent)


def open_dir_at(parent: int, name: str) -> int:
    """The directory ``name`` in ``parent``; refuses a symlink (``ELOOP``/``ENOTDIR``)."""
    return _at(name, DIR_FLAGS, parent)


def open_dir(root: str, *parts: str) -> int:
    """A directory fd: ``root`` (trusted, opened normally), then each part without links."""
    fd = os.open(root, os.O_RDONLY | DIRECTORY | CLOEXEC)
    return walk_to(fd, parts)


def walk_to(fd: int, parts: Iterable[str]) -> int:
    """Descend from the directory ``fd`` through ``parts`` (consumes ``fd``)."""
    for part in parts:
        try:
            child = open_dir_at(fd, part)
        finally:
            os.close(fd)
        fd = child
    return fd


def open_file_at(parent: int, name: str) -> tuple[int, os.stat_result]:
    """A regular file in ``parent``, opened without following a link or blocking.

    Raises ``OSError`` (``ELOOP`` for a symlink) or ``IsADirectoryError`` /
    ``ValueError`` when the entry is not a regular file (a FIFO, a device, a socket).
    """
    fd = _at(name, FILE_FLAGS, parent)
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        os.close(fd)
        raise ValueError(f"{name} is not a regular file")
    return fd, info
