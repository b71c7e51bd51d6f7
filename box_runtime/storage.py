"""Filesystem measurements and probes (blocking; call them in a worker thread).

* :func:`measure_tree`: bytes and entries under a directory, bounded by an entry cap,
  walked through directory file descriptors without following any symlink (a sandbox
  that swaps a directory for a link mid-walk cannot lead it outside); used for
  workspace quotas and storage analysis.
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
from box_runtime.link_names import PROBE_PREFIX
from box_runtime.portable import DIRECTORY, NOFOLLOW
from box_runtime.safe_fs import open_dir, open_dir_at

__all__ = ["PROBE_PREFIX", "TreeSize", "measure_tree", "verify_shared_workspace"]

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


_MAX_DEPTH = 128


class _Walk:
    def __init__(self, max_entries: int) -> None:
        self.max_entries = max_entries
        self.size = self.entries = self.errors = 0
        self.complete = True

    def directory(self, fd: int, depth: int) -> bool:
        """Add up the directory ``fd`` (consumed); False once the entry cap is reached."""
        try:
            with os.scandir(fd) as listing:
                for entry in listing:
                    self.entries += 1
                    if self.entries > self.max_entries:
                        self.entries -= 1
                        self.complete = False
                        return False
                    try:
                        info = entry.stat(follow_symlinks=False)
                    except OSError:
                        self.errors += 1
                        continue
                    if not stat.S_ISDIR(info.st_mode):
                        self.size += info.st_size
                        continue
                    if depth >= _MAX_DEPTH:
                        self.complete = False
                        continue
                    try:
                        child = open_dir_at(fd, entry.name)
                    except OSError:
                        self.errors += 1  # swapped for a link, or gone, since the listing
                        continue
                    if not self.directory(child, depth + 1):
                        return False
        except OSError:
            self.errors += 1
        finally:
            os.close(fd)
        return True


def measure_tree(root: str, *, max_entries: int, parts: tuple[str, ...] = ()) -> TreeSize:
    """Sum file sizes under ``root``/``parts`` without following links; stop at ``max_entries``.

    ``root`` is trusted (opened normally); each of ``parts`` is opened without
    following a link (``root`` may be a container's ``/proc/<pid>/root``).
    """
    try:
        fd = open_dir(root, *parts)
    except OSError:
        return TreeSize(0, 0, exists=False, complete=True)
    walk = _Walk(max_entries)
    walk.directory(fd, 0)
    return TreeSize(walk.size, walk.entries, True, walk.complete, walk.errors)


def verify_shared_workspace(workspace_root: str, marker_name: str) -> dict[str, object]:
    """Digest the host's marker file ``marker_name`` directly inside ``workspace_root``."""
    if not _PROBE_NAME.fullmatch(marker_name):
        raise BoxValidationError("invalid shared workspace probe name")
    root_fd = marker_fd = -1
    try:
        root_fd = os.open(workspace_root, os.O_RDONLY | DIRECTORY | NOFOLLOW)
        marker_fd = os.open(marker_name, os.O_RDONLY | NOFOLLOW, dir_fd=root_fd)
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
