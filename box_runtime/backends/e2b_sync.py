"""Mount sync for E2B: only the files that changed since the last sync, each way.

An E2B sandbox cannot bind a host directory, so a session's mounts are copied (what
is synced and what is not: docs/box.md, *E2B*). Each mount keeps a :class:`Manifest`,
what both sides looked like when they last agreed (each file's size and mtime, on the
host and as envd lists it): :func:`push` uploads only the host files whose stamp
changed, in one multipart request, and removes in the sandbox what the host deleted;
:func:`pull` lists the sandbox once, downloads only what changed, and deletes on the
host what the sandbox deleted (unless the host changed it meanwhile).
"""

from __future__ import annotations

import contextlib
import logging
import os
import posixpath
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Protocol

import anyio

from box_runtime.errors import BoxValidationError
from box_runtime.portable import NONBLOCK, open_no_link

__all__ = ["Manifest", "RemoteEntry", "RemoteFiles", "SyncLimits", "pull", "push", "scan_host"]

logger = logging.getLogger("box_runtime.e2b")

#: Listing depth of a sandbox directory (envd walks this many levels).
LIST_DEPTH = 64
#: Up to this many files just uploaded are stat'ed (concurrently) rather than listed.
STAT_AT_MOST = 16
Stamp = tuple[int, int]


@dataclass(frozen=True, slots=True)
class SyncLimits:
    max_file_bytes: int
    max_files: int


@dataclass(frozen=True, slots=True)
class RemoteEntry:
    """One entry of a sandbox directory listing (relative path, kind, stamp)."""

    rel: str
    kind: str  # "file", "dir" or "other"
    stamp: Stamp


class RemoteFiles(Protocol):
    """The few sandbox file operations the sync needs (the backend adapts the SDK)."""

    async def listing(self, root: str) -> list[RemoteEntry] | None:
        """The tree below ``root`` (``None`` when it does not exist)."""
        ...

    async def upload(self, files: list[tuple[str, bytes]]) -> None: ...

    async def stamps(self, paths: list[str]) -> dict[str, Stamp]:
        """The stamps of a few files (one concurrent stat each; missing ones left out)."""
        ...

    async def download(self, path: str) -> bytes: ...

    async def remove(self, path: str) -> None: ...

    async def make_executable(self, paths: list[str]) -> None:
        """Set the executable bits of files just uploaded (uploads carry no mode)."""
        ...


@dataclass
class Manifest:
    """What both sides of one mount looked like when they last agreed."""

    host: dict[str, Stamp] = field(default_factory=dict[str, Stamp])
    remote: dict[str, Stamp] = field(default_factory=dict[str, Stamp])
    #: Files uploaded / downloaded / removed in all (for logs and tests).
    sent: int = 0
    received: int = 0


def scan_host(root: str, limits: SyncLimits) -> dict[str, Stamp]:
    """Regular files below ``root`` (links never followed): relative path -> stamp."""
    found: dict[str, Stamp] = {}
    skipped = 0
    for current, dirs, names in os.walk(root, followlinks=False):
        dirs.sort()
        relative = os.path.relpath(current, root)
        prefix = "" if relative == "." else relative.replace(os.sep, "/") + "/"
        for name in sorted(names):
            try:
                info = os.lstat(os.path.join(current, name))
            except OSError:
                continue
            regular = stat.S_ISREG(info.st_mode) and info.st_size <= limits.max_file_bytes
            if not regular or len(found) >= limits.max_files:
                skipped += 1
                continue
            found[prefix + name] = (info.st_size, info.st_mtime_ns)
    if skipped:
        logger.warning("Box e2b: %d files below %s not synced (kind or size cap)", skipped, root)
    return found


def _read_host(root: str, rels: Iterable[str]) -> list[tuple[str, bytes, bool]]:
    """``(rel, content, executable)`` of each file still there."""
    out: list[tuple[str, bytes, bool]] = []
    for rel in rels:
        path = os.path.join(root, *rel.split("/"))
        try:
            fd = open_no_link(path, os.O_RDONLY | NONBLOCK)
        except OSError:
            continue  # gone or replaced by a link since the scan
        with os.fdopen(fd, "rb") as file:
            executable = bool(os.fstat(file.fileno()).st_mode & 0o111)
            out.append((rel, file.read(), executable))
    return out


async def push(
    files: RemoteFiles, host_root: str, remote_root: str, manifest: Manifest, limits: SyncLimits
) -> int:
    """Upload what changed on the host since the last sync; return how many files."""
    current = await anyio.to_thread.run_sync(scan_host, host_root, limits)
    changed = sorted(rel for rel, st in current.items() if manifest.host.get(rel) != st)
    removed = sorted(rel for rel in manifest.host if rel not in current)
    if not changed and not removed:
        return 0
    contents = await anyio.to_thread.run_sync(_read_host, host_root, changed)
    if contents:
        await files.upload([(posixpath.join(remote_root, rel), data) for rel, data, _ in contents])
        executables = [posixpath.join(remote_root, rel) for rel, _, x in contents if x]
        if executables:
            await files.make_executable(executables)
    # A top-level directory gone from the host goes whole (not file by file, which
    # would leave it behind empty).
    gone = await anyio.to_thread.run_sync(_gone_directories, host_root, removed)
    for top in gone:
        await files.remove(posixpath.join(remote_root, top))
    for rel in removed:
        if rel in manifest.remote and rel.split("/", 1)[0] not in gone:
            await files.remove(posixpath.join(remote_root, rel))
    manifest.host = current
    manifest.sent += len(contents) + len(removed)
    for rel in removed:
        manifest.remote.pop(rel, None)
    # The sandbox's stamps of what was just written (so the next pull skips them): a
    # stat each for a few files, one listing of the tree for many.
    if len(contents) <= STAT_AT_MOST:
        written = [posixpath.join(remote_root, rel) for rel, _, _ in contents]
        stamps = await files.stamps(written)
        for rel, _, _ in contents:
            stamp = stamps.get(posixpath.join(remote_root, rel))
            if stamp is None:
                manifest.remote.pop(rel, None)
            else:
                manifest.remote[rel] = stamp
    else:
        listing = await files.listing(remote_root)
        manifest.remote = _remote_files(listing or [])
    return len(contents)


def _gone_directories(host_root: str, removed: list[str]) -> list[str]:
    tops = {rel.split("/", 1)[0] for rel in removed if "/" in rel}
    return sorted(top for top in tops if not os.path.lexists(os.path.join(host_root, top)))


def _remote_files(listing: list[RemoteEntry]) -> dict[str, Stamp]:
    return {entry.rel: entry.stamp for entry in listing if entry.kind == "file"}


def _host_target(host_root: str, rel: str) -> str:
    """The host path of ``rel``, refused when it would leave ``host_root``."""
    parts = rel.split("/")
    if any(part in ("", ".", "..") for part in parts):
        raise BoxValidationError(f"the sandbox listed an unsafe path {rel!r}")
    target = os.path.join(host_root, *parts)
    parent = os.path.realpath(os.path.dirname(target))
    root = os.path.realpath(host_root)
    if parent != root and not parent.startswith(root + os.sep):
        raise BoxValidationError(f"the sandbox path {rel!r} leaves the host workspace")
    return target


def _write_host(host_root: str, rel: str, data: bytes) -> Stamp:
    target = _host_target(host_root, rel)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    target = _host_target(host_root, rel)  # the directories just made hold no links
    with open(target + ".lbp-sync", "wb") as file:
        file.write(data)
    os.replace(target + ".lbp-sync", target)
    info = os.lstat(target)
    return (info.st_size, info.st_mtime_ns)


def _remove_host(host_root: str, rel: str, expected: Stamp | None) -> None:
    target = _host_target(host_root, rel)
    try:
        info = os.lstat(target)
    except OSError:
        return
    if stat.S_ISREG(info.st_mode) and (info.st_size, info.st_mtime_ns) == expected:
        os.unlink(target)


def _make_host_dirs(host_root: str, rels: list[str]) -> None:
    for rel in rels:
        try:
            target = _host_target(host_root, rel)
        except BoxValidationError as exc:
            logger.warning("Box e2b: directory not synced to the host: %s", exc)
            continue
        if not os.path.lexists(target):
            os.makedirs(target, exist_ok=True)


async def pull(
    files: RemoteFiles, remote_root: str, host_root: str, manifest: Manifest, limits: SyncLimits
) -> int:
    """Download what changed in the sandbox since the last sync; return how many files."""
    listing = await files.listing(remote_root)
    if listing is None:
        return 0
    remote = _remote_files(listing)
    changed = sorted(rel for rel, st in remote.items() if manifest.remote.get(rel) != st)
    removed = sorted(rel for rel in manifest.remote if rel not in remote)
    dirs = [entry.rel for entry in listing if entry.kind == "dir"]
    await anyio.to_thread.run_sync(_make_host_dirs, host_root, dirs)
    received = 0
    for rel in changed:
        size = remote[rel][0]
        if size > limits.max_file_bytes or received >= limits.max_files:
            logger.warning("Box e2b: %s not synced to the host (size or count cap)", rel)
            continue
        data = await files.download(posixpath.join(remote_root, rel))
        try:
            manifest.host[rel] = await anyio.to_thread.run_sync(_write_host, host_root, rel, data)
        except BoxValidationError as exc:  # a link on the host side: never written through
            logger.warning("Box e2b: file not synced to the host: %s", exc)
            continue
        received += 1
    for rel in removed:
        expected = manifest.host.pop(rel, None)
        with contextlib.suppress(BoxValidationError):
            await anyio.to_thread.run_sync(_remove_host, host_root, rel, expected)
    manifest.remote = remote
    manifest.received += received + len(removed)
    return received
