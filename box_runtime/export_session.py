"""Explicit export from a live session: the async side of :mod:`box_runtime.export`
(and of the import into one, :mod:`box_runtime.inbox`).

Both operations hold the session like a command does (so they never overlap one,
and a session being deleted refuses them), ask the backend where the files are, and
read or compare-and-delete them there (or, when the files are not reachable from
this host, inside the sandbox through the backend). Reading never creates or
changes a session; a run's cumulative limits are kept on the session, per run.
"""

from __future__ import annotations

from collections.abc import Callable

import anyio

from box_runtime.backends.base import SandboxBackend
from box_runtime.errors import BoxBackendUnavailableError
from box_runtime.export import (
    LIMITS,
    ExportedFile,
    ExportLimits,
    RunLedger,
    charge,
    check_paths,
    read_files,
    remove_if_unchanged,
)
from box_runtime.inbox import check_import, write_files
from box_runtime.sessions import Session

__all__ = ["read_session_files", "remove_session_files", "write_session_files"]


async def read_session_files(
    backend: SandboxBackend,
    session: Session,
    paths: list[str],
    *,
    run_id: str | None,
    clock: Callable[[], float],
) -> tuple[list[ExportedFile], RunLedger | None]:
    """The selected files (all or none) and the run's ledger after them."""
    check_paths(paths)
    async with session.use(clock, "before its files were read"):
        files = await anyio.to_thread.run_sync(backend.sandbox_files, session.plan, session.handle)
        if files is None:
            batch = await backend.export_remote(session.plan, session.handle, paths, LIMITS)
        else:
            batch = await anyio.to_thread.run_sync(lambda: read_files(files, paths))
        if run_id is None:
            return batch, None
        ledger = session.exports.setdefault(run_id, RunLedger())
        charge(ledger, batch)
        return batch, ledger


async def remove_session_files(
    backend: SandboxBackend,
    session: Session,
    files: list[tuple[str, str]],
    *,
    clock: Callable[[], float],
) -> list[tuple[str, str | None]]:
    """Delete each ``(path, sha256)`` still unchanged; ``(path, why it was kept or None)``."""
    check_paths([path for path, _ in files], ExportLimits(call_files=len(files)))
    outcome: list[tuple[str, str | None]] = []
    async with session.use(clock, "before its files were removed"):
        where = await anyio.to_thread.run_sync(backend.sandbox_files, session.plan, session.handle)
        for path, digest in files:
            if where is None:
                kept = await backend.remove_remote(session.plan, session.handle, path, digest)
            else:
                kept = await anyio.to_thread.run_sync(remove_if_unchanged, where, path, digest)
            outcome.append((path, kept))
    return outcome


async def write_session_files(
    backend: SandboxBackend,
    session: Session,
    directory: str,
    items: list[tuple[str, bytes]],
    *,
    clock: Callable[[], float],
) -> list[str]:
    """Import ``items`` (name, bytes) into ``directory`` of the session; their paths."""
    check_import(directory, [(name, len(data)) for name, data in items])
    async with session.use(clock, "before files were imported into it"):
        files = await anyio.to_thread.run_sync(backend.sandbox_files, session.plan, session.handle)
        if files is None:
            raise BoxBackendUnavailableError(
                f"the {backend.name} backend's sandboxes are not reachable from this host "
                "(a remote engine): files cannot be imported into them"
            )
        return await anyio.to_thread.run_sync(write_files, files, directory, items)
