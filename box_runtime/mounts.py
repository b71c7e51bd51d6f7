"""Mounts the Box makes below its session directories: idmapped binds, and detaching.

:func:`bind_idmapped` mounts a directory a second time with its owner shown as the jail
user (the nsjail backend's way to let its jail write a workspace the host created as
root: docs/box.md, *nsjail*), built from the new mount API (``open_tree``,
``mount_setattr`` with ``MOUNT_ATTR_IDMAP``, ``move_mount``) and a user namespace a
short-lived helper holds while its maps are written (kept, one per mapping).
:func:`mounts_below` lists the mount points below a directory and :func:`detach`
unmounts one lazily: a session directory is deleted only once nothing is mounted below.

Every function is blocking; Linux only (elsewhere :func:`idmap_unavailable` says why).
"""

from __future__ import annotations

import ctypes
import os
import re
import subprocess
import sys
import threading

__all__ = ["IdmapError", "bind_idmapped", "detach", "idmap_unavailable", "mounts_below"]

# The new mount API's syscall numbers are the same on every Linux architecture.
_SYS_OPEN_TREE, _SYS_MOVE_MOUNT, _SYS_MOUNT_SETATTR = 428, 429, 442
_OPEN_TREE_CLONE = 1
_AT_FDCWD = -100
_AT_EMPTY_PATH = 0x1000
_MOVE_MOUNT_F_EMPTY_PATH = 0x4
_MOUNT_ATTR_IDMAP = 0x00100000
_MNT_DETACH = 2
_CLONE_NEWUSER = 0x10000000
#: The helper: enter a new user namespace, say so, and wait until stdin closes.
_HOLDER = (
    "import ctypes, sys\n"
    f"if ctypes.CDLL(None, use_errno=True).unshare({_CLONE_NEWUSER}) != 0:\n"
    "    sys.exit(1)\n"
    "sys.stdout.write('ready\\n'); sys.stdout.flush(); sys.stdin.read()\n"
)


class IdmapError(OSError):
    """An idmapped mount could not be made (the message says which step and why)."""


class _MountAttr(ctypes.Structure):
    _fields_ = (
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    )


_lock = threading.Lock()
#: (owner uid, owner gid, jail uid, jail gid) -> a user namespace fd with that mapping.
_namespaces: dict[tuple[int, int, int, int], int] = {}


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def _check(result: int, step: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise IdmapError(errno, f"{step}: {os.strerror(errno)}")
    return result


def idmap_unavailable() -> str | None:
    """Why idmapped mounts cannot be made here, or ``None``."""
    if not sys.platform.startswith("linux"):
        return "idmapped mounts need Linux"
    if os.geteuid() != 0:
        return "idmapped mounts need a Box running as root"
    return None


def _maps(owner: int, jail: int) -> str:
    """``owner`` on disk is ``jail`` through the mount; ``jail`` on disk is root there."""
    if owner == jail:
        return f"{owner} {jail} 1\n"
    return f"{owner} {jail} 1\n{jail} 0 1\n"


def _namespace(owner_uid: int, owner_gid: int, jail_uid: int, jail_gid: int) -> int:
    key = (owner_uid, owner_gid, jail_uid, jail_gid)
    with _lock:
        found = _namespaces.get(key)
        if found is not None:
            return found
        holder = subprocess.Popen(
            [sys.executable, "-c", _HOLDER],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert holder.stdout is not None
            if holder.stdout.readline() != b"ready\n":
                raise IdmapError(0, "no user namespace could be made for the idmapped mount")
            proc = f"/proc/{holder.pid}"
            with open(f"{proc}/uid_map", "w", encoding="ascii") as file:
                file.write(_maps(owner_uid, jail_uid))
            with open(f"{proc}/setgroups", "w", encoding="ascii") as file:
                file.write("deny\n")
            with open(f"{proc}/gid_map", "w", encoding="ascii") as file:
                file.write(_maps(owner_gid, jail_gid))
            fd = os.open(f"{proc}/ns/user", os.O_RDONLY | os.O_CLOEXEC)
        finally:
            if holder.stdin is not None:
                holder.stdin.close()
            holder.wait()
            if holder.stdout is not None:
                holder.stdout.close()
        _namespaces[key] = fd
        return fd


def bind_idmapped(
    source: str, target: str, *, owner: tuple[int, int], jail: tuple[int, int]
) -> None:
    """Mount ``source`` at ``target`` (an empty directory) with ``owner`` seen as ``jail``."""
    namespace = _namespace(owner[0], owner[1], jail[0], jail[1])
    libc = _libc()
    tree = _check(
        libc.syscall(
            _SYS_OPEN_TREE, _AT_FDCWD, os.fsencode(source), _OPEN_TREE_CLONE | os.O_CLOEXEC
        ),
        "open_tree",
    )
    try:
        attr = _MountAttr(_MOUNT_ATTR_IDMAP, 0, 0, namespace)
        _check(
            libc.syscall(
                _SYS_MOUNT_SETATTR,
                tree,
                b"",
                _AT_EMPTY_PATH,
                ctypes.byref(attr),
                ctypes.sizeof(attr),
            ),
            "mount_setattr (idmap)",
        )
        _check(
            libc.syscall(
                _SYS_MOVE_MOUNT, tree, b"", _AT_FDCWD, os.fsencode(target), _MOVE_MOUNT_F_EMPTY_PATH
            ),
            "move_mount",
        )
    finally:
        os.close(tree)


def _unescape(field: str) -> str:
    """A mountinfo path (spaces, tabs, newlines and backslashes as octal escapes)."""
    return re.sub(r"\\(\d{3}|\d{1,2}\Z)", lambda escape: chr(int(escape.group(1), 8)), field)


def mounts_below(directory: str) -> list[str]:
    """Mount points at or below ``directory`` in this mount namespace, deepest first."""
    prefix = os.path.realpath(directory)
    found: list[str] = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as file:
            for line in file:
                point = _unescape(line.split(" ")[4])
                if point == prefix or point.startswith(prefix.rstrip("/") + "/"):
                    found.append(point)
    except OSError:
        return []
    return sorted(found, key=len, reverse=True)


def detach(point: str) -> None:
    """Unmount ``point`` lazily (``MNT_DETACH``); one that is not mounted is no error."""
    if _libc().umount2(os.fsencode(point), _MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        if errno not in (22, 2):  # EINVAL: not a mount point; ENOENT: gone
            raise OSError(errno, f"umount {point}: {os.strerror(errno)}")
