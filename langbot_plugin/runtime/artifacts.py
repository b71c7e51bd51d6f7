"""Plugin packages (``.lbpkg`` zip files), verified and unpacked safely.

Stored by content (``<data>/artifacts/<sha256>/``), so an unchanged package is never
unpacked twice. The central directory is checked before anything is written (paths,
links, duplicate or encrypted entries, counts, sizes, compression ratios); the stdlib's
reader bounds each entry by its declared size and checks its CRC, so a lying header is
refused. Entries go to a private temporary folder renamed into place only when all
succeeded. Every refusal is an :class:`ArtifactError` (``artifact_invalid``).
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import secrets
import shutil
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from langbot_plugin.rpc.errors import RPCError

__all__ = ["ArtifactError", "ArtifactStore", "UnpackLimits", "safe_unpack"]


_DIGEST = re.compile(r"[0-9a-f]{64}")


class ArtifactError(RPCError):
    """A package was refused; ``details`` says which entry and which rule."""

    code = "artifact_invalid"


@dataclass(frozen=True, slots=True)
class UnpackLimits:
    max_entries: int = 4096
    max_entry_bytes: int = 64 * 1024 * 1024
    max_total_bytes: int = 256 * 1024 * 1024
    max_ratio: float = 200.0
    ratio_floor_bytes: int = 1024 * 1024


def _refuse(reason: str, entry: str | None = None, **details: object) -> ArtifactError:
    info: dict[str, object] = {"reason": reason, **details}
    if entry is not None:
        info["entry"] = entry
    where = f" ({entry})" if entry else ""
    return ArtifactError(f"package refused: {reason}{where}", details=info)


def _safe_name(name: str) -> PurePosixPath:
    if "\x00" in name or "\\" in name:
        raise _refuse("path contains a backslash or NUL", name)
    path = PurePosixPath(name)
    if path.is_absolute() or (path.parts and path.parts[0].endswith(":")):
        raise _refuse("absolute path", name)
    if ".." in path.parts:
        raise _refuse("path leaves the package", name)
    if not path.parts:
        raise _refuse("empty path", name)
    return path


def _check_entries(entries: list[zipfile.ZipInfo], limits: UnpackLimits) -> None:
    """Refuse the package from its central directory alone (nothing is written yet)."""
    if len(entries) > limits.max_entries:
        raise _refuse("too many entries", limit=limits.max_entries, actual=len(entries))
    seen: set[str] = set()
    files: dict[str, str] = {}
    folders: set[str] = set()
    total = 0
    for info in entries:
        path = _safe_name(info.filename)
        key = path.as_posix().rstrip("/")
        if key in seen:
            raise _refuse("duplicate entry", info.filename)
        seen.add(key)
        folders.update(parent.as_posix() for parent in PurePosixPath(key).parents)
        if not info.is_dir():
            files[key] = info.filename
        if stat.S_ISLNK(info.external_attr >> 16):
            raise _refuse("links are not allowed", info.filename)
        if info.flag_bits & 0x1:
            raise _refuse("encrypted entry", info.filename)
        if info.is_dir():
            continue
        if info.file_size > limits.max_entry_bytes:
            raise _refuse(
                "entry too large",
                info.filename,
                limit=limits.max_entry_bytes,
                actual=info.file_size,
            )
        ratio = info.file_size / max(1, info.compress_size)
        if info.file_size > limits.ratio_floor_bytes and ratio > limits.max_ratio:
            raise _refuse("compression ratio too high", info.filename, limit=limits.max_ratio)
        total += info.file_size
        if total > limits.max_total_bytes:
            raise _refuse(
                "package too large when unpacked", limit=limits.max_total_bytes, declared=total
            )
    clashes = sorted(files.keys() & folders)
    if clashes:
        raise _refuse("entry is both a file and a folder", files[clashes[0]])


def _write_entry(archive: zipfile.ZipFile, info: zipfile.ZipInfo, destination: Path) -> None:
    written = 0
    try:
        with archive.open(info) as source, open(destination, "xb") as sink:
            while chunk := source.read(1 << 20):
                written += len(chunk)
                sink.write(chunk)
    except (zipfile.BadZipFile, zlib.error, EOFError) as exc:
        raise _refuse(f"corrupt entry: {exc}", info.filename) from None
    except NotImplementedError as exc:  # a compression method zipfile cannot read
        raise _refuse(f"unsupported entry: {exc}", info.filename) from None
    if written != info.file_size:
        raise _refuse(
            "entry is shorter than its header says",
            info.filename,
            declared=info.file_size,
            actual=written,
        )


def safe_unpack(content: bytes, target: Path, limits: UnpackLimits = UnpackLimits()) -> None:
    """Unpack a zip into the empty folder ``target`` under ``limits``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(content))
    except (zipfile.BadZipFile, ValueError) as exc:
        raise _refuse(f"not a zip file: {exc}") from None
    with archive:
        entries = archive.infolist()
        _check_entries(entries, limits)
        for info in entries:
            destination = target.joinpath(*PurePosixPath(info.filename).parts)
            if info.is_dir():
                destination.mkdir(parents=True, exist_ok=True)
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            _write_entry(archive, info, destination)
            mode = info.external_attr >> 16
            os.chmod(destination, 0o755 if mode & 0o111 else 0o644)


class ArtifactStore:
    """Unpacked packages by digest under ``root``."""

    def __init__(self, root: Path, limits: UnpackLimits = UnpackLimits()) -> None:
        self.root = root
        self.limits = limits

    def path_for(self, digest: str) -> Path:
        """The folder of the package ``digest`` names; a digest is what the host sends
        (``artifact_digest``), so anything but 64 hex digits is refused, never a path."""
        if not _DIGEST.fullmatch(digest):
            raise ArtifactError(
                "artifact_digest must be a sha256 (64 lowercase hex digits)",
                details={"reason": "malformed digest"},
            )
        return self.root / digest

    def has(self, digest: str) -> bool:
        """Whether the package ``digest`` names is here (``False`` for what is not a digest)."""
        return bool(_DIGEST.fullmatch(digest)) and (self.root / digest / "manifest.yaml").is_file()

    def put(self, content: bytes, expected_digest: str | None = None) -> tuple[str, Path]:
        """Verify and unpack ``content`` (once); return its digest and folder."""
        digest = hashlib.sha256(content).hexdigest()
        if expected_digest and expected_digest != digest:
            raise ArtifactError(
                "package digest does not match the installation's artifact_digest",
                details={
                    "reason": "digest mismatch",
                    "expected": expected_digest,
                    "actual": digest,
                },
            )
        final = self.path_for(digest)
        if self.has(digest):
            return digest, final
        self.root.mkdir(parents=True, exist_ok=True)
        staging = self.root / f".staging-{digest[:16]}-{secrets.token_hex(4)}"
        staging.mkdir(mode=0o755)
        try:
            safe_unpack(content, staging, self.limits)
            if not (staging / "manifest.yaml").is_file():
                raise _refuse("no manifest.yaml at the top of the package")
            if final.exists():
                shutil.rmtree(final)
            staging.rename(final)
        finally:
            if staging.exists():
                shutil.rmtree(staging, ignore_errors=True)
        return digest, final

    def remove(self, digest: str) -> None:
        shutil.rmtree(self.path_for(digest), ignore_errors=True)
