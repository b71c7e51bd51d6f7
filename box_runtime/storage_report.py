"""``box_get_storage_analysis``: what a tenant's sessions hold, inside the sandboxes.

The figures and their keys are the reference's (docs/box.md, *Protocol*). Unlike the
reference, nothing runs inside a sandbox and no session lock is taken: the runtime
measures the directories itself (the session's own directories, or a container's files
through ``/proc/<pid>/root``), walking file descriptors without following links, so a
busy session is measured as well and a hostile one cannot redirect the walk.
"""

from __future__ import annotations

import anyio

from box_runtime.backends.base import SandboxBackend
from box_runtime.protocol import StorageAnalysis, StorageDirectory
from box_runtime.sessions import Session
from box_runtime.storage import TreeSize, measure_tree

__all__ = ["SANDBOX_KEYS", "analyse"]

#: key -> the path it stands for inside a sandbox.
SANDBOX_KEYS = {
    "session_workspaces": "/workspace",
    "session_caches": "~/.cache",
    "session_temp": "/tmp",
}
_LOCATION = {"session_caches": "caches", "session_temp": "temp"}


def _measure_session(
    backend: SandboxBackend, session: Session, max_entries: int
) -> dict[str, TreeSize | None]:
    locations = backend.storage_locations(session.plan, session.handle)
    figures: dict[str, TreeSize | None] = {
        "session_workspaces": measure_tree(session.workspace_dir, max_entries=max_entries)
    }
    for key, name in _LOCATION.items():
        location = locations.get(name)
        figures[key] = (
            None
            if location is None
            else measure_tree(location[0], parts=location[1], max_entries=max_entries)
        )
    return figures


async def analyse(
    backend: SandboxBackend | None, sessions: list[Session], *, max_entries: int
) -> StorageAnalysis:
    """The storage report of ``sessions`` (one tenant's)."""
    totals = {key: [False, 0, 0, 0] for key in SANDBOX_KEYS}  # exists, bytes, files, errors
    details: list[StorageDirectory] = []
    for session in sessions:
        if backend is None:
            break
        figures = await anyio.to_thread.run_sync(_measure_session, backend, session, max_entries)
        host_mounted = not session.plan.workspace_owned
        for key, size in figures.items():
            total = totals[key]
            if size is None:
                total[3] += 1
                continue
            if key == "session_workspaces":
                details.append(
                    StorageDirectory(
                        key=f"session:{session.key.session_id}",
                        path=f"{session.spec.mount_path} ({session.key.session_id})"
                        + (" (host_path)" if host_mounted else ""),
                        kind="detail",
                        parent_key=key,
                        exists=size.exists,
                        size_bytes=size.size_bytes,
                        file_count=size.entries,
                        error_count=size.errors + (0 if size.complete else 1),
                        scope="sandbox_sessions",
                    )
                )
                if host_mounted:
                    continue
            total[0] = bool(total[0]) or size.exists
            total[1] += size.size_bytes
            total[2] += size.entries
            total[3] += size.errors + (0 if size.complete else 1)
    directories: list[StorageDirectory] = []
    if sessions:
        for key, path in SANDBOX_KEYS.items():
            exists, size_bytes, files, errors = totals[key]
            directories.append(
                StorageDirectory(
                    key=key,
                    path=f"{path} ({len(sessions)} sandbox sessions)",
                    exists=bool(exists),
                    size_bytes=int(size_bytes),
                    file_count=int(files),
                    error_count=int(errors),
                    scope="sandbox_sessions",
                )
            )
    directories.extend(details)
    return StorageAnalysis(
        size_bytes=sum(d.size_bytes for d in directories if d.kind == "root"),
        directories=directories,
        active_sessions=len(sessions),
    )
