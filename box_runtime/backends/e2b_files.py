"""A sandbox's files through the e2b SDK: the sync's operations and explicit export.

:class:`SandboxFileOps` adapts ``AsyncSandbox.files`` to what :mod:`.e2b_sync` needs
(one listing RPC for a tree, one multipart request for many uploads). :func:`export`
and :func:`remove_if_unchanged` implement explicit export (seed 004) for a sandbox
whose files are not on this host: the same limits, refusals and compare-then-delete
as :mod:`box_runtime.export`, read inside the sandbox (the paths were checked by
:func:`~box_runtime.export.check_paths` first). Links are refused, and so is anything
that is not a regular file.
"""

from __future__ import annotations

import hashlib
import logging
import posixpath
import shlex
from typing import Any

import anyio
from e2b import AsyncSandbox, CommandExitException, EntryInfo, FileType
from e2b.exceptions import NotFoundException

from box_runtime.backends.e2b_errors import sdk_errors
from box_runtime.backends.e2b_sync import LIST_DEPTH, RemoteEntry
from box_runtime.errors import BoxExportRefusedError, BoxQuotaExceededError
from box_runtime.export import ExportedFile, ExportLimits, check_size, over_limit, refused

__all__ = ["SandboxFileOps", "export", "remove_if_unchanged"]

logger = logging.getLogger("box_runtime.e2b")


def _stamp(entry: EntryInfo) -> tuple[int, int]:
    moment = entry.modified_time
    micros = int(moment.timestamp()) * 1_000_000 + moment.microsecond
    return (entry.size, micros)


class SandboxFileOps:
    """The sync's file operations on one sandbox, as user ``user``."""

    def __init__(self, sandbox: AsyncSandbox, user: str, request_timeout: float) -> None:
        self._sandbox = sandbox
        self._user = user
        self._timeout = request_timeout

    @property
    def user(self) -> str:
        return self._user

    @property
    def _id(self) -> str:
        return self._sandbox.sandbox_id

    async def listing(self, root: str) -> list[RemoteEntry] | None:
        with sdk_errors("list files", self._id):
            try:
                entries = await self._sandbox.files.list(
                    root, depth=LIST_DEPTH, user=self._user, request_timeout=self._timeout
                )
            except NotFoundException:
                return None
        prefix = root.rstrip("/") + "/"
        listed: list[RemoteEntry] = []
        for entry in entries:
            if not entry.path.startswith(prefix):
                continue
            kind = "file" if entry.type == FileType.FILE else "other"
            kind = "dir" if entry.type == FileType.DIR else kind
            listed.append(RemoteEntry(entry.path[len(prefix) :], kind, _stamp(entry)))
        return listed

    async def upload(self, files: list[tuple[str, bytes]]) -> None:
        entries: list[Any] = [{"path": path, "data": data} for path, data in files]
        with sdk_errors("upload files", self._id):
            await self._sandbox.files.write_files(
                entries, user=self._user, request_timeout=self._timeout
            )

    async def stamps(self, paths: list[str]) -> dict[str, tuple[int, int]]:
        found: dict[str, tuple[int, int]] = {}

        async def stat(path: str) -> None:
            with sdk_errors("stat a file", self._id):
                try:
                    entry = await self._sandbox.files.get_info(
                        path, user=self._user, request_timeout=self._timeout
                    )
                except NotFoundException:
                    return
            if entry.type == FileType.FILE:
                found[path] = _stamp(entry)

        async with anyio.create_task_group() as tg:
            for path in paths:
                tg.start_soon(stat, path)
        return found

    async def download(self, path: str) -> bytes:
        with sdk_errors("download a file", self._id):
            data = await self._sandbox.files.read(
                path, format="bytes", user=self._user, request_timeout=self._timeout
            )
        return bytes(data)

    async def make_executable(self, paths: list[str]) -> None:
        command = "chmod a+x -- " + " ".join(shlex.quote(path) for path in paths)
        with sdk_errors("set executable bits", self._id):
            try:
                await self._sandbox.commands.run(
                    command, user=self._user, timeout=60, request_timeout=self._timeout
                )
            except CommandExitException as exc:
                logger.warning("Box e2b: executable bits not set: %s", exc.stderr.strip()[-300:])

    async def remove(self, path: str) -> None:
        with sdk_errors("remove a file", self._id):
            try:
                await self._sandbox.files.remove(
                    path, user=self._user, request_timeout=self._timeout
                )
            except NotFoundException:
                pass


async def _regular(ops: SandboxFileOps, sandbox: AsyncSandbox, path: str) -> EntryInfo:
    """The entry of ``path`` if it is a regular file (not a link), else a refusal."""
    with sdk_errors("stat a file", sandbox.sandbox_id):
        try:
            entry = await sandbox.files.get_info(path, user=ops.user)
        except NotFoundException:
            raise refused(path, "missing", "it does not exist") from None
    if entry.type == FileType.SYMLINK or entry.symlink_target:
        raise refused(path, "symlink", "it is a symbolic link")
    if entry.type != FileType.FILE:
        raise refused(path, "not_regular", "it is not a regular file")
    parent = posixpath.dirname(path)
    if entry.path and posixpath.dirname(entry.path) != parent:
        raise refused(path, "symlink", "a directory on its path is a symbolic link")
    return entry


async def export(
    ops: SandboxFileOps, sandbox: AsyncSandbox, paths: list[str], limits: ExportLimits
) -> list[ExportedFile]:
    """Read every selected file inside the sandbox, or none."""
    out: list[ExportedFile] = []
    total = 0
    for path in paths:
        entry = await _regular(ops, sandbox, path)
        check_size(limits, path, entry.size, total, paths)
        data = await ops.download(path)
        if len(data) > limits.file_bytes:
            raise over_limit("file_bytes", limits.file_bytes, len(data), [path], lower_bound=True)
        if len(data) != entry.size:
            raise refused(path, "changed", "it changed while it was read")
        total += len(data)
        uid = 0 if entry.owner == "root" else 1000
        gid = 0 if entry.group == "root" else 1000
        mtime_ns = _stamp(entry)[1] * 1000
        mode = entry.mode & 0o7777
        out.append(ExportedFile.of(path, data, mode=mode, uid=uid, gid=gid, mtime_ns=mtime_ns))
    return out


async def remove_if_unchanged(
    ops: SandboxFileOps, sandbox: AsyncSandbox, path: str, sha256: str, limits: ExportLimits
) -> str | None:
    """Delete ``path`` in the sandbox if its content still has ``sha256``; else why not."""
    try:
        entry = await _regular(ops, sandbox, path)
        if entry.size > limits.file_bytes:
            return "changed"
        data = await ops.download(path)
    except BoxExportRefusedError as exc:
        return str(exc.details.get("reason"))
    except BoxQuotaExceededError:
        return "changed"
    if hashlib.sha256(data).hexdigest() != sha256:
        return "changed"
    await ops.remove(path)
    return None
