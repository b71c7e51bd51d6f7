"""Filesystem measurements and probes (blocking; call them in a worker thread).

* :func:`measure_tree`: bytes and entries under a directory, bounded by an entry cap,
  never following symlinks; used for workspace quotas and storage analysis.
* :func:`verify_shared_workspace`: the host proves that it and the Box see the same
  workspace volume by writing a high-entropy marker file; the Box reads it by
  basename only, never following a symlink, and returns its digest.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from dataclasses import dataclass

from box_runtime.errors import BoxReadinessError, BoxValidationError

__all__ = ["PROBE_PREFIX", "TreeSize", "measure_tree", "verify_shared_workspace"]

PROBE_PREFIX = ".langbot-box-volume-probe-"
_PROBE_NAME = re.compile(rf"^{re.escape(PROBE_PREFIX)}[0-9a-f]{{32}}$")
_MAX_PROBE_BYTES = 1024


@dataclass(frozen=True, slots=True)
class TreeSize:
    size_bytes: int
    entries: int
    exists: bool
    #: False when the walk stopped at the entry cap (the figures are lower bounds).
    complete: bool
    errors: int = 0


def measure_tree(root: str, *, max_entries: int) -> TreeSize:
    """Sum file sizes under ``root`` without following symlinks; stop after ``max_entries``."""
    if not os.path.isdir(root):
        return TreeSize(0, 0, exists=False, complete=True)
    size = entries = errors = 0
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            with os.scandir(directory) as listing:
                for entry in listing:
                    entries += 1
                    if entries > max_entries:
                        return TreeSize(size, entries - 1, True, False, errors)
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        errors += 1
                        continue
                    if stat.S_ISDIR(info.st_mode):
                        stack.append(entry.path)
                    else:
                        size += info.st_size
        except OSError:
            errors += 1
    return TreeSize(size, entries, True, True, errors)


def verify_shared_workspace(workspace_root: str, marker_name: str) -> dict[str, object]:
    """Digest the host's marker file ``marker_name`` directly inside ``workspace_root``."""
    if not _PROBE_NAME.fullmatch(marker_name):
        raise BoxValidationError("invalid shared workspace probe name")
    nofollow = getattr(os, "O_NOFOLLOW", 0)
    root_fd = marker_fd = -1
    try:
        root_fd = os.open(workspace_root, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | nofollow)
        marker_fd = os.open(marker_name, os.O_RDONLY | nofollow, dir_fd=root_fd)
        info = os.fstat(marker_fd)
        if not stat.S_ISREG(info.st_mode):
            raise BoxReadinessError("the shared workspace probe is not a regular file")
        if not 0 < info.st_size <= _MAX_PROBE_BYTES:
            raise BoxReadinessError("the shared workspace probe has an invalid size")
        data = os.read(marker_fd, _MAX_PROBE_BYTES + 1)
        if len(data) != info.st_size:
            raise BoxReadinessError("the shared workspace probe changed while it was read")
    except OSError as exc:
        raise BoxReadinessError(
            f"the Box cannot read the shared workspace probe in {workspace_root}: {exc.strerror}"
        ) from None
    finally:
        for fd in (marker_fd, root_fd):
            if fd >= 0:
                os.close(fd)
    return {
        "marker_name": marker_name,
        "sha256": hashlib.sha256(data).hexdigest(),
        "size": len(data),
    }
