"""Workspace quotas: how each session's disk use is bounded, and how it is measured.

``filesystem``: the session's writable directories live on an ext4 image of the quota's
size, loop-mounted at ``<session dir>/volume``. ``watch``: file sizes are capped at the
quota and the runtime measures the workspace while a command runs. Either way a session
over its quota stays usable and the runtime reports it (:class:`QuotaReport`); see
docs/box.md, *Workspace quotas*.

Everything here is blocking; call it in a worker thread.
"""

from __future__ import annotations

import contextlib
import logging
import os
import shutil
import subprocess
from typing import Literal

from box_runtime.errors import BoxValidationError
from box_runtime.portable import effective_uid

__all__ = [
    "VOLUME_DIR",
    "VOLUME_IMAGE",
    "QuotaEnforcement",
    "filesystem_quota_unavailable",
    "mount_volume",
    "unmount_volume",
    "volume_usage",
]

logger = logging.getLogger("box_runtime")

QuotaEnforcement = Literal["filesystem", "watch", "none"]

#: Where the quota filesystem of a session is mounted, and its image, in the session dir.
VOLUME_DIR = "volume"
VOLUME_IMAGE = "volume.img"
_TOOLS = ("mkfs.ext4", "mount", "umount")
_SBIN = "/usr/local/sbin:/usr/sbin:/sbin"


def _tool(name: str) -> str | None:
    return shutil.which(name) or shutil.which(name, path=_SBIN)


def filesystem_quota_unavailable() -> str | None:
    """Why a loop-mounted quota filesystem cannot be made here, or ``None``."""
    if effective_uid() != 0:
        return "the Box does not run as root (loop mounts need it)"
    if not os.path.exists("/dev/loop-control"):
        return "no loop devices (/dev/loop-control is missing)"
    missing = [tool for tool in _TOOLS if _tool(tool) is None]
    if missing:
        return f"missing tools: {', '.join(missing)}"
    return None


def _run(*args: str) -> None:
    binary = _tool(args[0])
    if binary is None:
        raise BoxValidationError(f"cannot prepare the quota filesystem: no {args[0]}")
    result = subprocess.run(
        [binary, *args[1:]], capture_output=True, text=True, timeout=60, check=False
    )
    if result.returncode != 0:
        detail = (result.stderr or result.stdout).strip()[-300:]
        raise BoxValidationError(
            f"cannot prepare the quota filesystem ({args[0]} exited {result.returncode}: {detail})"
        )


def mount_volume(session_dir: str, size_bytes: int) -> str:
    """Mount (creating it on first use) the session's quota filesystem; return its path.

    An image left by an earlier run of the Box (a persistent session) is mounted as it
    is, keeping its files; a volume that is already mounted is adopted.
    """
    volume = os.path.join(session_dir, VOLUME_DIR)
    image = os.path.join(session_dir, VOLUME_IMAGE)
    os.makedirs(volume, mode=0o711, exist_ok=True)
    if os.path.ismount(volume):
        return volume
    if not os.path.exists(image):
        fd = os.open(image, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        try:
            os.ftruncate(fd, size_bytes)  # sparse: disk use grows as files are written
        finally:
            os.close(fd)
        try:
            _run("mkfs.ext4", "-q", "-F", "-m", "0", "-O", "^has_journal", "-i", "16384", image)
        except BaseException:
            os.unlink(image)
            raise
    _run("mount", "-t", "ext4", "-o", "loop,nosuid,nodev,noatime", image, volume)
    with contextlib.suppress(OSError):
        os.rmdir(os.path.join(volume, "lost+found"))
    os.chmod(volume, 0o711)
    return volume


def unmount_volume(session_dir: str) -> None:
    """Unmount the session's quota filesystem if it is mounted (its image stays)."""
    volume = os.path.join(session_dir, VOLUME_DIR)
    if not os.path.ismount(volume):
        return
    try:
        _run("umount", volume)
    except BoxValidationError:
        # Still busy (a process of a removed sandbox holding a file): detach it now;
        # the kernel frees it when the last user goes.
        logger.warning("Box: %s is busy; detaching it lazily", volume)
        _run("umount", "-l", volume)


def volume_usage(path: str) -> tuple[int, int, int]:
    """``(used, free, size)`` bytes of the filesystem holding ``path``."""
    info = os.statvfs(path)
    size = info.f_blocks * info.f_frsize
    free = info.f_bavail * info.f_frsize
    return size - info.f_bfree * info.f_frsize, free, size
