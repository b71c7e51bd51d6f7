"""The stand-in's file helpers: envd's entry records, listings, writes (blocking)."""

from __future__ import annotations

import os
import shutil
import stat
from typing import Any

from tests.support.e2b_standin.sandbox import USER_UID, SandboxDir

__all__ = ["entry_of", "file_type", "list_dir", "make_dirs", "remove", "write_file"]


def file_type(mode: int) -> Any:
    from e2b.envd.filesystem import filesystem_pb

    if stat.S_ISDIR(mode):
        return filesystem_pb.FileType.DIRECTORY
    if stat.S_ISREG(mode):
        return filesystem_pb.FileType.FILE
    return filesystem_pb.FileType.UNSPECIFIED


def entry_of(directory: SandboxDir, host: str) -> Any:
    from e2b.envd.filesystem import filesystem_pb
    from protobuf.wkt import Timestamp

    info = os.lstat(host)
    is_link = stat.S_ISLNK(info.st_mode)
    target = os.stat(host) if is_link and os.path.exists(host) else info
    return filesystem_pb.EntryInfo(
        name=os.path.basename(host),
        type=file_type(target.st_mode),
        path=directory.sandbox_path(host),
        size=target.st_size,
        mode=stat.S_IMODE(info.st_mode),
        permissions=stat.filemode(info.st_mode),
        owner="user" if info.st_uid == USER_UID else "root",
        group="user" if info.st_gid == USER_UID else "root",
        modified_time=Timestamp.from_nanos(info.st_mtime_ns),
        is_symlink=is_link,
    )


def list_dir(directory: SandboxDir, host: str, depth: int) -> list[Any]:
    if not os.path.isdir(host):
        raise FileNotFoundError(directory.sandbox_path(host))
    entries: list[Any] = []
    limit = depth or 1
    pending = [(host, 1)]
    while pending:
        current, level = pending.pop()
        for item in sorted(os.scandir(current), key=lambda e: e.name):
            entries.append(entry_of(directory, item.path))
            if level < limit and item.is_dir(follow_symlinks=False):
                pending.append((item.path, level + 1))
    return entries


def make_dirs(host: str, owner: int) -> None:
    missing: list[str] = []
    path = host
    while not os.path.exists(path):
        missing.append(path)
        path = os.path.dirname(path)
    for path in reversed(missing):
        os.mkdir(path)
        os.chown(path, owner, owner)


def write_file(host: str, data: bytes, owner: int) -> None:
    make_dirs(os.path.dirname(host), owner)
    with open(host, "wb") as file:
        file.write(data)
    os.chown(host, owner, owner)


def remove(host: str) -> None:
    if os.path.isdir(host) and not os.path.islink(host):
        shutil.rmtree(host)
    else:
        os.unlink(host)
