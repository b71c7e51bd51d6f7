"""Per-session directories on the host: whose they are, and removing them.

Each carries a ``session.json`` marker (deployment, persistence); at startup
:func:`sweep` removes this deployment's non-persistent leftovers and nothing else
(docs/box.md, *Sessions and operations*). Blocking; call these in a worker thread.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
from typing import cast

from box_runtime.mounts import detach, mounts_below
from box_runtime.quota import unmount_volume

__all__ = ["MARKER", "read_marker", "remove_session_dir", "sweep", "write_marker"]

MARKER = "session.json"
logger = logging.getLogger("box_runtime")


def write_marker(
    session_dir: str,
    *,
    deployment_id: str,
    session_id: str,
    workspace_uuid: str | None,
    persistent: bool,
) -> None:
    """Record which deployment owns ``session_dir`` and whether it must survive restarts."""
    marker = {
        "deployment_id": deployment_id,
        "session_id": session_id,
        "workspace_uuid": workspace_uuid,
        "persistent": persistent,
    }
    path = os.path.join(session_dir, MARKER)
    temporary = f"{path}.tmp"
    with open(temporary, "w", encoding="utf-8") as file:
        json.dump(marker, file)
    os.replace(temporary, path)


def read_marker(session_dir: str) -> dict[str, object] | None:
    """The marker of a session directory, or ``None`` when it has none (or a bad one)."""
    try:
        with open(os.path.join(session_dir, MARKER), encoding="utf-8") as file:
            loaded: object = json.load(file)
    except (OSError, ValueError):
        return None
    return cast(dict[str, object], loaded) if isinstance(loaded, dict) else None


def remove_session_dir(session_dir: str) -> None:
    """Delete a session's runtime-owned directory, unmounting what is mounted below it.

    The quota volume first (its own way), then anything else (an idmapped workspace);
    a directory that still has a mount below it is left in place, never deleted
    through the mount.
    """
    unmount_volume(session_dir)
    for point in mounts_below(session_dir):
        try:
            detach(point)
        except OSError as exc:
            logger.warning("Box: could not unmount %s: %s", point, exc)
    if mounts_below(session_dir):
        logger.warning("Box: %s keeps a mount; not removing it", session_dir)
        return
    shutil.rmtree(session_dir, ignore_errors=True)


def sweep(sessions_root: str, deployment_id: str) -> list[str]:
    """Remove the non-persistent session directories ``deployment_id`` left behind."""
    removed: list[str] = []
    try:
        entries = sorted(os.scandir(sessions_root), key=lambda entry: entry.name)
    except OSError:
        return removed
    for entry in entries:
        if not entry.is_dir(follow_symlinks=False):
            continue
        marker = read_marker(entry.path)
        if marker is None or marker.get("deployment_id") != deployment_id:
            continue
        if marker.get("persistent") is True:
            continue
        remove_session_dir(entry.path)
        removed.append(entry.path)
    return removed
