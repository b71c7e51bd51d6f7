"""Importing files into a session (a run's input attachments), the Box's side.

``box_write_files`` lands a run's attachments in ``/workspace/inbox/<name>/`` as the
sandbox user. Like the export (:mod:`box_runtime.export`), the write never follows a
link the sandbox made: the directory is walked from a trusted host root
(:class:`SandboxFiles`) with ``openat`` and ``O_NOFOLLOW``, and each file is created
``O_EXCL``. Names and limits: docs/box.md, *Importing files*.

Blocking; call it in a worker thread.
"""

from __future__ import annotations

import errno
import os
import posixpath
from collections.abc import Sequence

from box_runtime.errors import BoxQuotaExceededError, BoxValidationError
from box_runtime.export import LIMITS, SandboxFiles
from box_runtime.portable import CLOEXEC, NOFOLLOW, effective_uid
from box_runtime.safe_fs import open_dir, open_dir_at

__all__ = ["INBOX", "check_import", "write_files"]

#: Where imported files go in a sandbox.
INBOX = "/workspace/inbox"
_WRITE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | NOFOLLOW | CLOEXEC
_DIR_MODE = 0o755
_FILE_MODE = 0o644


def _name_problem(name: str) -> str | None:
    if not name or name in (".", "..") or "/" in name or "\\" in name or "\x00" in name:
        return "a file name must be a plain name (no separators, not . or ..)"
    if len(name.encode("utf-8")) > 255:
        return "a file name is at most 255 bytes"
    return None


def check_import(directory: str, files: Sequence[tuple[str, int]]) -> None:
    """Refuse a bad request before anything is written: ``directory`` must be a
    normalized path below :data:`INBOX`; ``files`` are ``(name, size)`` within the
    limits, names distinct."""
    if (
        posixpath.normpath(directory) != directory
        or not directory.startswith(INBOX + "/")
        or "\x00" in directory
    ):
        raise BoxValidationError(f"imports go to a normalized directory below {INBOX}")
    if not files:
        raise BoxValidationError("name at least one file to import")
    names = [name for name, _ in files]
    for name in names:
        problem = _name_problem(name)
        if problem is not None:
            raise BoxValidationError(f"{name!r}: {problem}")
    if len(set(names)) != len(names):
        raise BoxValidationError("two files of one import have the same name")
    total = sum(size for _, size in files)
    for quota, limit, actual in (
        ("import_call_files", LIMITS.call_files, len(files)),
        ("import_file_bytes", LIMITS.file_bytes, max(size for _, size in files)),
        ("import_call_bytes", LIMITS.call_bytes, total),
    ):
        if actual > limit:
            raise BoxQuotaExceededError(
                f"{quota}: {actual} is over the limit of {limit}; nothing was written",
                details={"quota": quota, "limit": limit, "actual": actual},
            )


def _owner(files: SandboxFiles) -> tuple[int, int] | None:
    identity = files.identity
    if identity is None or identity.uid < 0 or effective_uid() != 0:
        return None
    gid = min(identity.gids) if identity.gids else identity.uid
    return identity.uid, gid


def _enter(parent: int, name: str, owner: tuple[int, int] | None) -> int:
    try:
        os.mkdir(name, _DIR_MODE, dir_fd=parent)
    except FileExistsError:
        pass
    else:
        if owner is not None:
            os.chown(name, *owner, dir_fd=parent, follow_symlinks=False)
    try:
        return open_dir_at(parent, name)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            raise BoxValidationError(f"{name} on the import path is not a directory") from exc
        raise


def write_files(
    files: SandboxFiles, directory: str, items: Sequence[tuple[str, bytes]]
) -> list[str]:
    """Write ``items`` (name, bytes) into the sandbox ``directory`` (created as
    needed); returns their sandbox paths. Checked first with :func:`check_import`."""
    check_import(directory, [(name, len(data)) for name, data in items])
    root, parts = files.locate(directory)
    owner = _owner(files)
    fd = open_dir(root)
    try:
        for part in parts:
            child = _enter(fd, part, owner)
            os.close(fd)
            fd = child
        written: list[str] = []
        for name, data in items:
            try:
                out = os.open(name, _WRITE_FLAGS, _FILE_MODE, dir_fd=fd)
            except FileExistsError as exc:
                raise BoxValidationError(f"{directory}/{name} exists already") from exc
            try:
                view = memoryview(data)
                while view:
                    view = view[os.write(out, view) :]
                if owner is not None:
                    os.fchown(out, *owner)
            finally:
                os.close(out)
            written.append(f"{directory}/{name}")
        return written
    finally:
        os.close(fd)
