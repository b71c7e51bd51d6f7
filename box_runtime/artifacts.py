"""Content-addressed mounts: verified, per-command copies of immutable trees.

A mount under :data:`~box_runtime.models.ARTIFACT_MOUNT_ROOT` belongs to the one command
that names it, not to the session: its manifest is checked against its
``content_digest``, exactly the files it lists are copied (checked, sealed read-only)
into the session's store, and the backend shows that copy at its mount path. The rules
and limits are in docs/box.md, *Content-addressed mounts*. Blocking functions run in a
worker thread; :attr:`ArtifactStore.lock` serialises them.
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import anyio

from box_runtime.errors import (
    BoxArtifactDigestError,
    BoxArtifactRefusedError,
    BoxQuotaExceededError,
)
from box_runtime.models import BoxMountSpec
from box_runtime.safe_fs import open_dir, open_file_at, walk_to
from box_runtime.security import check_mount
from box_runtime.tree_manifest import ManifestError, load_manifest

__all__ = [
    "MAX_ARTIFACTS",
    "MAX_STORE_BYTES",
    "Artifact",
    "ArtifactSource",
    "ArtifactStore",
    "check_sources",
    "split_mounts",
]

#: Per artifact: the limits of a published skill package.
MAX_FILES = 2048
MAX_BYTES = 256 * 1024 * 1024
#: Per session store.
MAX_ARTIFACTS = 256
MAX_STORE_BYTES = 1024 * 1024 * 1024
STORE_DIR = "artifacts"
VIEW_DIR = "artifact-view"


def split_mounts(mounts: Iterable[BoxMountSpec]) -> tuple[list[BoxMountSpec], list[BoxMountSpec]]:
    """``(fixed mounts, content-addressed mounts)`` of a request."""
    fixed: list[BoxMountSpec] = []
    artifacts: list[BoxMountSpec] = []
    for mount in mounts:
        (artifacts if mount.content_addressed else fixed).append(mount)
    return fixed, artifacts


@dataclass(frozen=True, slots=True)
class ArtifactSource:
    """A content-addressed mount whose paths passed the mount checks (real paths)."""

    digest: str
    package: str
    manifest: str
    mount_path: str

    @property
    def hex(self) -> str:
        return self.digest.removeprefix("sha256:")


@dataclass(frozen=True, slots=True)
class Artifact:
    """A verified copy, ready for a command: ``host_path`` read-only at ``sandbox_path``."""

    hex: str
    host_path: str
    sandbox_path: str


def check_sources(
    mounts: Iterable[BoxMountSpec],
    allowed_roots: Sequence[str],
    *,
    extra_denied: tuple[str, ...],
    skills_root: str,
) -> tuple[ArtifactSource, ...]:
    """The content-addressed mounts among ``mounts``, their package and manifest checked
    as mount sources (the skill store counts as an allowed root). Blocking."""
    roots = [*allowed_roots, *([skills_root] if skills_root else [])]
    found: list[ArtifactSource] = []
    for mount in mounts:
        if not (mount.content_addressed and mount.content_digest and mount.manifest_path):
            continue
        field = f"extra_mounts[{mount.mount_path}]"
        package = check_mount(
            mount.host_path, roots, field=f"{field}.host_path", extra_denied=extra_denied
        )
        manifest = check_mount(
            mount.manifest_path, roots, field=f"{field}.manifest_path", extra_denied=extra_denied
        )
        source = ArtifactSource(mount.content_digest, package, manifest, mount.mount_path)
        if not os.path.isdir(package):
            raise _refused("unavailable", source, f"its package {mount.host_path} is no directory")
        found.append(source)
    return tuple(found)


def _refused(reason: str, source: ArtifactSource, message: str) -> BoxArtifactRefusedError:
    cls = BoxArtifactDigestError if reason == "digest_mismatch" else BoxArtifactRefusedError
    return cls(
        f"the content-addressed mount {source.mount_path} is refused: {message}",
        details={"reason": reason, "mount_path": source.mount_path, "digest": source.digest},
    )


class ArtifactStore:
    """One session's verified copies (``<session dir>/artifacts``) and its view folder."""

    def __init__(self, session_dir: str) -> None:
        self.root = os.path.join(session_dir, STORE_DIR)
        self.view = os.path.join(session_dir, VIEW_DIR)
        self.lock = anyio.Lock()
        #: How many running commands and processes use each digest.
        self.held: collections.Counter[str] = collections.Counter()
        #: What the view holds (``None``: not looked at yet).
        self.shown: frozenset[str] | None = None

    def hold(self, hexes: Iterable[str]) -> None:
        self.held.update(hexes)

    def release(self, hexes: Iterable[str]) -> None:
        self.held.subtract(hexes)
        self.held = +self.held  # drop the counts that reached 0

    @property
    def in_use(self) -> frozenset[str]:
        return frozenset(self.held)

    async def verify(self, sources: Sequence[ArtifactSource]) -> None:
        """Verify ``sources`` (copying in what is new) without using them yet."""
        if sources:
            async with self.lock:
                await anyio.to_thread.run_sync(lambda: self.prepare(sources, keep=self.in_use))

    async def acquire(
        self, sources: Sequence[ArtifactSource], *, view: bool
    ) -> tuple[Artifact, ...]:
        """Verify and hold ``sources`` for a command or process; :meth:`release` them after.

        ``view``: the backend sees the session's view folder, which then holds exactly
        the digests in use (a digest no command or process uses is hidden again).
        """
        if not sources and (not view or self.shown == self.in_use):
            return ()
        hexes = [source.hex for source in sources]
        async with self.lock:
            await anyio.to_thread.run_sync(lambda: self.prepare(sources, keep=self.in_use))
            self.hold(hexes)
            try:
                if view and self.shown != self.in_use:
                    await anyio.to_thread.run_sync(self.show, self.in_use)
                return self.artifacts(sources)
            except BaseException:
                self.release(hexes)
                raise

    def _where(self, hex_digest: str) -> str | None:
        for base in (self.view, self.root):
            path = os.path.join(base, hex_digest)
            if os.path.isdir(path) and not os.path.islink(path):
                return path
        return None

    def prepare(self, sources: Sequence[ArtifactSource], *, keep: Iterable[str] = ()) -> None:
        """Verify every source's manifest; copy in the digests this session lacks.

        ``keep``: digests in use (never dropped to make room). Blocking.
        """
        os.makedirs(self.root, mode=0o711, exist_ok=True)
        loaded: list[tuple[ArtifactSource, dict[str, Any]]] = []
        for source in sources:
            try:
                digest, manifest = load_manifest(
                    source.manifest, max_files=MAX_FILES, max_bytes=MAX_BYTES
                )
            except ManifestError as exc:
                raise _refused("manifest_invalid", source, str(exc)) from None
            if digest != source.digest:
                raise _refused(
                    "digest_mismatch",
                    source,
                    f"its manifest's digest is {digest}, not the content_digest {source.digest}",
                )
            found = self._where(source.hex)
            if found is None:
                loaded.append((source, manifest))
            else:
                os.utime(found)  # recently used: the last to be dropped for room
        if not loaded:
            return
        needed = {s.hex for s, _ in loaded} | set(keep) | {s.hex for s in sources}
        self._make_room(sum(m["total_bytes"] for _, m in loaded), len(loaded), needed)
        for source, manifest in loaded:
            self._copy(source, manifest)

    def _entries(self) -> list[tuple[float, str, str]]:
        """``(mtime, hex, path)`` of every copy, in the store or the view."""
        found: list[tuple[float, str, str]] = []
        for base in (self.root, self.view):
            with contextlib.suppress(FileNotFoundError), os.scandir(base) as listing:
                for entry in listing:
                    if len(entry.name) == 64 and entry.is_dir(follow_symlinks=False):
                        found.append(
                            (entry.stat(follow_symlinks=False).st_mtime, entry.name, entry.path)
                        )
        return sorted(found)

    def _make_room(self, incoming_bytes: int, incoming: int, needed: set[str]) -> None:
        entries = self._entries()
        sizes = {hex_digest: _tree_bytes(path) for _, hex_digest, path in entries}
        count, used = len(entries), sum(sizes.values())
        for _, hex_digest, path in entries:
            if count + incoming <= MAX_ARTIFACTS and used + incoming_bytes <= MAX_STORE_BYTES:
                return
            if hex_digest in needed:
                continue
            _remove_sealed(path)
            count, used = count - 1, used - sizes[hex_digest]
        if count + incoming > MAX_ARTIFACTS:
            raise _full("artifact_count", MAX_ARTIFACTS, count + incoming)
        if used + incoming_bytes > MAX_STORE_BYTES:
            raise _full("artifact_bytes", MAX_STORE_BYTES, used + incoming_bytes)

    def _copy(self, source: ArtifactSource, manifest: dict[str, Any]) -> None:
        staging = tempfile.mkdtemp(prefix=".staging-", dir=self.root)
        try:
            try:
                root_fd = open_dir(source.package)
            except OSError as exc:
                raise _refused(
                    "unavailable", source, f"its package cannot be read ({exc.strerror})"
                ) from None
            try:
                for entry in manifest["files"]:
                    _copy_entry(root_fd, entry, staging, source)
            finally:
                os.close(root_fd)
            _seal(staging)
            os.rename(staging, os.path.join(self.root, source.hex))
        finally:
            if os.path.lexists(staging):
                _remove_sealed(staging)

    def show(self, wanted: frozenset[str]) -> None:
        """Make the view hold exactly ``wanted`` (digests already prepared). Blocking."""
        os.makedirs(self.root, mode=0o711, exist_ok=True)
        with os.scandir(self.view) as listing:
            shown = {entry.name for entry in listing}
        for name in shown - wanted:
            os.rename(os.path.join(self.view, name), os.path.join(self.root, name))
        for name in wanted - shown:
            os.rename(os.path.join(self.root, name), os.path.join(self.view, name))
        self.shown = wanted

    def artifacts(self, sources: Sequence[ArtifactSource]) -> tuple[Artifact, ...]:
        """The verified copies of ``sources`` where they are now (after :meth:`prepare`)."""
        found: list[Artifact] = []
        for source in sources:
            path = self._where(source.hex)
            if path is None:  # pragma: no cover - prepare() made it
                raise _refused("unavailable", source, "its verified copy is gone")
            found.append(Artifact(source.hex, path, source.mount_path))
        return tuple(found)


def _full(quota: str, limit: int, actual: int) -> BoxQuotaExceededError:
    return BoxQuotaExceededError(
        f"a session holds at most {MAX_ARTIFACTS} content-addressed mounts and "
        f"{MAX_STORE_BYTES} bytes of them; the ones in use now leave no room ({quota}: "
        f"{actual} > {limit})",
        details={"quota": quota, "limit": limit, "actual": actual},
    )


def _copy_entry(root_fd: int, entry: dict[str, Any], staging: str, source: ArtifactSource) -> None:
    parts = str(entry["path"]).split("/")
    try:
        directory = walk_to(os.dup(root_fd), parts[:-1])
        try:
            fd, _ = open_file_at(directory, parts[-1])
        finally:
            os.close(directory)
    except (OSError, ValueError):
        raise _refused(
            "content_changed", source, f"{entry['path']} is missing or not a regular file"
        ) from None
    target = os.path.join(staging, *parts)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    digest = hashlib.sha256()
    written = 0
    try:
        with os.fdopen(fd, "rb") as reader, open(target, "xb") as writer:
            while chunk := reader.read(min(1 << 20, entry["size"] + 1 - written)):
                written += len(chunk)
                if written > entry["size"]:
                    break
                digest.update(chunk)
                writer.write(chunk)
    except OSError as exc:
        raise _refused("unavailable", source, f"{entry['path']}: {exc.strerror}") from None
    if written != entry["size"] or digest.hexdigest() != entry["sha256"]:
        raise _refused(
            "content_changed", source, f"{entry['path']} differs from its manifest entry"
        )
    os.chmod(target, 0o555 if entry["executable"] else 0o444)


def _seal(root: str) -> None:
    """Directories below ``root`` 0555; ``root`` itself 0755, so a Box that is not root
    can still move it between the store and the view (no sandbox can write to it: it is
    mounted read-only, or owned by the Box)."""
    for current, dirs, _files in os.walk(root, topdown=False):
        for name in dirs:
            os.chmod(os.path.join(current, name), 0o555)
    os.chmod(root, 0o755)


def _remove_sealed(root: str) -> None:
    for current, dirs, _files in os.walk(root):
        os.chmod(current, 0o755)
        for name in dirs:
            with contextlib.suppress(OSError):
                os.chmod(os.path.join(current, name), 0o755)
    shutil.rmtree(root, ignore_errors=True)


def _tree_bytes(root: str) -> int:
    total = 0
    for current, _dirs, files in os.walk(root):
        for name in files:
            with contextlib.suppress(OSError):
                total += os.lstat(os.path.join(current, name)).st_size
    return total
