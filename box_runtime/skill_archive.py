"""Uploaded skill archives (zip): checked from the central directory, then extracted.

Archives are untrusted: the central directory is checked as a whole before a single
byte is written (the limits are docs/box.md's, *Skills*); then each entry is extracted
through a byte counter (an entry whose header understates its size stops at the stated
size) and the archive's CRC check, into a fresh directory the caller owns and removes,
files 0644 or 0755, directories 0755. Every refusal is :class:`SkillArchiveError`
naming the entry and the limit.
"""

from __future__ import annotations

import io
import os
import posixpath
import stat
import zipfile
import zlib
from dataclasses import dataclass

from box_runtime.portable import open_no_link
from box_runtime.skill_package import SkillError

__all__ = ["ARCHIVE_LIMITS", "ArchiveLimits", "SkillArchiveError", "extract_archive"]


class SkillArchiveError(SkillError):
    """An uploaded archive was refused before (or while) it was extracted."""

    code = "box_skill_archive"


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    compressed_bytes: int = 20 * 1024 * 1024
    entries: int = 512
    entry_bytes: int = 16 * 1024 * 1024
    total_bytes: int = 64 * 1024 * 1024
    ratio: float = 100.0


ARCHIVE_LIMITS = ArchiveLimits()
_CHUNK = 64 * 1024
_ALLOWED_TYPES = (0, stat.S_IFREG, stat.S_IFDIR)


def _checked_name(info: zipfile.ZipInfo) -> list[str]:
    raw = info.filename
    name = raw.rstrip("/")
    parts = name.split("/")
    if (
        not name
        or "\x00" in raw
        or "\\" in raw
        or raw.startswith("/")
        or posixpath.normpath(name) != name
        or any(part in ("", ".", "..") for part in parts)
        or (len(parts[0]) >= 2 and parts[0][1] == ":")
    ):
        raise SkillArchiveError(f"the archive holds an unsafe path: {raw!r}")
    return parts


def _plan(archive: zipfile.ZipFile, size: int, limits: ArchiveLimits) -> list[zipfile.ZipInfo]:
    """Check the whole central directory; return the entries in order."""
    if size > limits.compressed_bytes:
        raise SkillArchiveError(
            f"the archive is {size} bytes; the limit is {limits.compressed_bytes} bytes"
        )
    members = archive.infolist()
    if len(members) > limits.entries:
        raise SkillArchiveError(
            f"the archive has {len(members)} entries; the limit is {limits.entries}"
        )
    seen: set[str] = set()
    total = 0
    for info in members:
        parts = _checked_name(info)
        folded = "/".join(parts).casefold()
        if folded in seen:
            raise SkillArchiveError(f"the archive holds {info.filename!r} twice")
        seen.add(folded)
        kind = stat.S_IFMT(info.external_attr >> 16)
        if kind == stat.S_IFLNK:
            raise SkillArchiveError(f"the archive holds a symbolic link: {info.filename}")
        if kind not in _ALLOWED_TYPES:
            raise SkillArchiveError(f"the archive holds a special file: {info.filename}")
        if info.flag_bits & 0x1:
            raise SkillArchiveError(f"the archive holds an encrypted entry: {info.filename}")
        if info.is_dir():
            if info.file_size:
                raise SkillArchiveError(f"a directory entry has content: {info.filename}")
            continue
        if info.file_size > limits.entry_bytes:
            raise SkillArchiveError(
                f"{info.filename} expands to {info.file_size} bytes; the limit is "
                f"{limits.entry_bytes} bytes an entry"
            )
        if info.file_size and (
            info.compress_size <= 0 or info.file_size / info.compress_size > limits.ratio
        ):
            raise SkillArchiveError(
                f"{info.filename} expands {info.file_size} bytes from {info.compress_size}; "
                f"the compression ratio limit is {limits.ratio:g}"
            )
        total += info.file_size
        if total > limits.total_bytes:
            raise SkillArchiveError(
                f"the archive expands to more than {limits.total_bytes} bytes "
                f"(at least {total} at {info.filename})"
            )
    return members


def extract_archive(data: bytes, target: str, limits: ArchiveLimits = ARCHIVE_LIMITS) -> None:
    """Check ``data`` (a zip) whole, then extract it into the new directory ``target``.

    ``target`` must not exist; on a refusal the caller removes it (nothing is kept).
    """
    if not data:
        raise SkillArchiveError("the uploaded archive is empty")
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise SkillArchiveError(f"the upload is not a valid zip archive ({exc})") from None
    with archive:
        members = _plan(archive, len(data), limits)
        os.mkdir(target, 0o755)
        for info in members:
            path = os.path.join(target, *_checked_name(info))
            if info.is_dir():
                os.makedirs(path, mode=0o755, exist_ok=True)
                continue
            os.makedirs(os.path.dirname(path), mode=0o755, exist_ok=True)
            _extract_one(archive, info, path)


def _extract_one(archive: zipfile.ZipFile, info: zipfile.ZipInfo, path: str) -> None:
    written = 0
    mode = 0o755 if (info.external_attr >> 16) & 0o111 else 0o644
    fd = open_no_link(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        with archive.open(info) as source:
            while chunk := source.read(_CHUNK):
                written += len(chunk)
                if written > info.file_size:
                    raise SkillArchiveError(
                        f"{info.filename} holds more than the {info.file_size} bytes it states"
                    )
                os.write(fd, chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError, NotImplementedError, RuntimeError) as exc:
        raise SkillArchiveError(f"{info.filename} is corrupt ({exc})") from None
    finally:
        os.close(fd)
    if written != info.file_size:
        raise SkillArchiveError(
            f"{info.filename} does not hold the {info.file_size} bytes it states"
        )
