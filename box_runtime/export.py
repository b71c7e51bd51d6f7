"""Explicit file export (seed 004), the Box's side: read selected sandbox files, safely.

The library under ``box_read_files`` and ``box_remove_files_if_match``:
:class:`SandboxFiles` says where a session's files are, and the functions here walk
each path from a trusted host root with ``openat`` and ``O_NOFOLLOW``, never block on a
FIFO, apply the sandbox user's rights, refuse a batch whole, and delete only what still
has the accepted digest. The rules and limits: docs/box.md, *Explicit file export*.
"""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Self

from box_runtime.errors import BoxExportRefusedError, BoxQuotaExceededError, BoxValidationError
from box_runtime.safe_fs import FILE_FLAGS, open_dir, open_dir_at
from langbot_plugin.protocol.box_export import (
    EXPORT_LIMITS,
    ExportLimits,
    limit_refusal,
    paths_problem,
)

__all__ = [
    "LIMITS",
    "RECORDED_FIELDS",
    "ExportLimits",
    "ExportedFile",
    "Identity",
    "RunLedger",
    "SandboxFiles",
    "charge",
    "check_paths",
    "check_size",
    "over_limit",
    "read_files",
    "refused",
    "remove_if_unchanged",
]

_NEVER = ("/proc", "/sys", "/dev")
_READ_CHUNK = 1024 * 1024


#: The limits of seed 004, shared with the SDK and the host.
LIMITS = EXPORT_LIMITS


@dataclass(frozen=True, slots=True)
class Identity:
    """Who the sandbox's processes run as (for the permission check)."""

    uid: int
    gids: frozenset[int]


@dataclass(frozen=True, slots=True)
class SandboxFiles:
    """Where a session's files are on this host.

    ``roots`` maps sandbox path prefixes to trusted host directories (the longest
    prefix wins); ``identity`` is the sandbox user, or ``None`` when the sandbox runs
    with the runtime's own rights (nothing to check).
    """

    roots: tuple[tuple[str, str], ...]
    identity: Identity | None

    def locate(self, path: str) -> tuple[str, list[str]]:
        """The host root and the components below it of a sandbox ``path``."""
        best: tuple[str, str] | None = None
        for prefix, host in self.roots:
            if (path == prefix or path.startswith(prefix.rstrip("/") + "/")) and (
                best is None or len(prefix) > len(best[0])
            ):
                best = (prefix, host)
        if best is None:
            raise refused(path, "outside", "it is not among the session's files")
        rest = path[len(best[0]) :].strip("/")
        return best[1], [part for part in rest.split("/") if part]


@dataclass(slots=True)
class ExportedFile:
    """One file read for export: its bytes and what the host records of it."""

    path: str
    data: bytes
    sha256: str
    size: int
    mode: int
    uid: int
    gid: int
    mtime_ns: int

    @classmethod
    def of(cls, path: str, data: bytes, *, mode: int, uid: int, gid: int, mtime_ns: int) -> Self:
        """The record of ``data`` read from ``path`` (its digest and size computed here)."""
        digest = hashlib.sha256(data).hexdigest()
        return cls(path, data, digest, len(data), mode, uid, gid, mtime_ns)


#: The fields of an :class:`ExportedFile` but its bytes: what the host is told and records.
RECORDED_FIELDS = ("path", "sha256", "size", "mode", "uid", "gid", "mtime_ns")


@dataclass(slots=True)
class RunLedger:
    """What one run exported from one session (``(path, sha256) -> size``)."""

    files: dict[tuple[str, str], int] = field(default_factory=dict[tuple[str, str], int])

    @property
    def bytes(self) -> int:
        return sum(self.files.values())


# --------------------------------------------------------------------------- errors


def refused(path: str, reason: str, why: str) -> BoxExportRefusedError:
    return BoxExportRefusedError(
        f"cannot export {path}: {why}; no file of the batch was exported, all were kept",
        details={
            "reason": reason,
            "sandbox_paths": [path],
            "files_retained": True,
            "suggested_action": "select regular files the sandbox wrote (no links, "
            "FIFOs or directories), then retry the export",
        },
    )


def over_limit(
    kind: str, limit: int, actual: int, paths: Sequence[str], *, lower_bound: bool = False
) -> BoxQuotaExceededError:
    message, details = limit_refusal(kind, limit, actual, paths, lower_bound=lower_bound)
    return BoxQuotaExceededError(message, details={"quota": f"export_{kind}", **details})


def check_size(
    limits: ExportLimits, path: str, size: int, total: int, paths: Sequence[str]
) -> None:
    """Refuse a file of ``size`` bytes over the file's limit or the call's (``total`` so far)."""
    if size > limits.file_bytes:
        raise over_limit("file_bytes", limits.file_bytes, size, [path])
    if total + size > limits.call_bytes:
        raise over_limit("call_bytes", limits.call_bytes, total + size, paths)


# --------------------------------------------------------------------------- checks


def check_paths(paths: Sequence[str], limits: ExportLimits = LIMITS) -> list[str]:
    """Non-empty, unique, normalized absolute sandbox paths, at most ``call_files``."""
    if paths and len(paths) > limits.call_files:
        raise over_limit("call_files", limits.call_files, len(paths), paths)
    problem = paths_problem(list(paths))
    if problem is not None:
        raise BoxValidationError(problem)
    for path in paths:
        if any(path == root or path.startswith(root + "/") for root in _NEVER):
            raise refused(path, "outside", f"{path.split('/')[1]} belongs to the kernel")
    return list(paths)


def _allows(
    uid: int, gid: int, mode: int, identity: Identity | None, bits: tuple[int, int, int]
) -> bool:
    """The kernel's owner / group / other rule for ``identity`` (no capabilities)."""
    if identity is None:
        return True
    owner, group, other = bits
    if uid == identity.uid:
        return bool(mode & owner)
    if gid in identity.gids:
        return bool(mode & group)
    return bool(mode & other)


def _may(info: os.stat_result, identity: Identity | None, bits: tuple[int, int, int]) -> bool:
    return _allows(info.st_uid, info.st_gid, info.st_mode, identity, bits)


_READ = (stat.S_IRUSR, stat.S_IRGRP, stat.S_IROTH)
_SEARCH = (stat.S_IXUSR, stat.S_IXGRP, stat.S_IXOTH)
_WRITE = (stat.S_IWUSR, stat.S_IWGRP, stat.S_IWOTH)


def _parent(files: SandboxFiles, path: str) -> tuple[int, str]:
    """A descriptor of the directory holding ``path`` (walked without links) and its name."""
    root, parts = files.locate(path)
    if not parts:
        raise refused(path, "not_regular", "it is a directory")
    try:
        fd = open_dir(root)
    except OSError as exc:
        raise refused(path, "missing", f"its directory is unavailable ({exc.strerror})") from None
    for part in parts[:-1]:
        try:
            if not _may(os.fstat(fd), files.identity, _SEARCH):
                raise refused(path, "unreadable", "the sandbox may not search its directory")
            child = open_dir_at(fd, part)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                raise refused(
                    path, "symlink", f"{part} on its path is a link or no directory"
                ) from None
            if exc.errno == errno.ENOENT:
                raise refused(path, "missing", "it does not exist") from None
            raise refused(path, "unreadable", exc.strerror or "unreadable") from None
        except BoxExportRefusedError:
            os.close(fd)
            raise
        os.close(fd)
        fd = child
    if not _may(os.fstat(fd), files.identity, _SEARCH):
        os.close(fd)
        raise refused(path, "unreadable", "the sandbox may not search its directory")
    return fd, parts[-1]


def _open_regular(parent: int, name: str, path: str) -> tuple[int, os.stat_result]:
    """Open the regular file ``name`` of ``parent``: never a link, never blocking."""
    try:
        before = os.stat(name, dir_fd=parent, follow_symlinks=False)
    except FileNotFoundError:
        raise refused(path, "missing", "it does not exist") from None
    except OSError as exc:
        raise refused(path, "unreadable", exc.strerror or "unreadable") from None
    if stat.S_ISLNK(before.st_mode):
        raise refused(path, "symlink", "it is a symbolic link")
    if not stat.S_ISREG(before.st_mode):
        raise refused(path, "not_regular", "it is not a regular file")
    try:
        fd = os.open(name, FILE_FLAGS, dir_fd=parent)
    except OSError as exc:
        reason = "symlink" if exc.errno == errno.ELOOP else "unreadable"
        raise refused(path, reason, exc.strerror or "cannot be opened") from None
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode) or (info.st_dev, info.st_ino) != (
        before.st_dev,
        before.st_ino,
    ):
        os.close(fd)
        raise refused(path, "not_regular", "it changed while it was opened")
    return fd, info


def _read_exactly(fd: int, size: int, limit: int, path: str) -> bytes:
    chunks: list[bytes] = []
    total = 0
    while chunk := os.read(fd, min(_READ_CHUNK, limit + 1 - total)):
        chunks.append(chunk)
        total += len(chunk)
        if total > limit:
            raise over_limit("file_bytes", limit, total, [path], lower_bound=True)
    data = b"".join(chunks)
    if len(data) != size:
        raise refused(path, "changed", "it changed while it was read")
    return data


def read_files(
    files: SandboxFiles, paths: Sequence[str], *, limits: ExportLimits = LIMITS
) -> list[ExportedFile]:
    """Read every selected file, or none (blocking; call it in a worker thread)."""
    check_paths(paths, limits)
    out: list[ExportedFile] = []
    total = 0
    for path in paths:
        parent, name = _parent(files, path)
        try:
            fd, info = _open_regular(parent, name, path)
        finally:
            os.close(parent)
        try:
            if not _may(info, files.identity, _READ):
                raise refused(path, "unreadable", "the sandbox user may not read it")
            check_size(limits, path, info.st_size, total, paths)
            data = _read_exactly(fd, info.st_size, limits.file_bytes, path)
        finally:
            os.close(fd)
        total += len(data)
        mode = stat.S_IMODE(info.st_mode)
        out.append(
            ExportedFile.of(
                path, data, mode=mode, uid=info.st_uid, gid=info.st_gid, mtime_ns=info.st_mtime_ns
            )
        )
    return out


def charge(ledger: RunLedger, batch: Iterable[ExportedFile], limits: ExportLimits = LIMITS) -> None:
    """Count ``batch`` against a run's cumulative limits, or refuse it whole.

    A file the run already exported with the same content is not counted again.
    """
    new = {(f.path, f.sha256): f.size for f in batch if (f.path, f.sha256) not in ledger.files}
    files = len(ledger.files) + len(new)
    paths = [path for path, _ in new]
    if files > limits.run_files:
        raise over_limit("run_files", limits.run_files, files, paths)
    size = ledger.bytes + sum(new.values())
    if size > limits.run_bytes:
        raise over_limit("run_bytes", limits.run_bytes, size, paths)
    ledger.files.update(new)


def remove_if_unchanged(files: SandboxFiles, path: str, sha256: str) -> str | None:
    """Delete ``path`` if its content still has ``sha256``; else say why it was kept.

    Blocking. Returns ``None`` when the file was removed, or the reason it was kept
    (``changed``, ``missing``, ``symlink``, ...): a kept file is never an error.
    """
    try:
        parent, name = _parent(files, path)
    except BoxExportRefusedError as exc:
        return str(exc.details.get("reason"))
    try:
        try:
            fd, info = _open_regular(parent, name, path)
        except BoxExportRefusedError as exc:
            return str(exc.details.get("reason"))
        try:
            if info.st_size > LIMITS.file_bytes:
                return "changed"
            digest = hashlib.sha256(_read_exactly(fd, info.st_size, LIMITS.file_bytes, path))
        except (BoxExportRefusedError, BoxQuotaExceededError):
            return "changed"
        finally:
            os.close(fd)
        if digest.hexdigest() != sha256:
            return "changed"
        directory = os.fstat(parent)
        identity = files.identity
        if not _may(directory, identity, _WRITE) or (
            identity is not None
            and directory.st_mode & stat.S_ISVTX
            and identity.uid not in (info.st_uid, directory.st_uid)
        ):
            return "not_permitted"
        now = os.stat(name, dir_fd=parent, follow_symlinks=False)
        if (now.st_dev, now.st_ino) != (info.st_dev, info.st_ino):
            return "changed"
        os.unlink(name, dir_fd=parent)
        return None
    except OSError:
        return "missing"
    finally:
        os.close(parent)
