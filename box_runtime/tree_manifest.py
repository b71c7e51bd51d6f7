"""The ``sha256-tree-v1`` manifest: what an immutable tree of files holds, and its digest.

A manifest is ``{"algorithm": "sha256-tree-v1", "files": [{"path", "size", "sha256",
"executable"}], "total_bytes"}`` (the reference's format, which the released host's
skill store writes beside every published revision). The tree's digest is ``sha256:``
and the SHA-256 of the manifest's canonical JSON (sorted keys, no spaces, UTF-8), so
the same files always give the same digest.

:func:`manifest_digest` computes it (:mod:`langbot_plugin.protocol.tree_digest`, shared
with the hosts that lay such trees out); :func:`load_manifest` reads a manifest a peer
wrote, refusing anything but that exact shape (relative, normalized paths without
``..``, backslashes or NUL, no duplicates, sizes that add up, within the limits).
"""

from __future__ import annotations

import json
import os
import posixpath
import stat
from typing import Any, cast

from langbot_plugin.protocol.tree_digest import MANIFEST_ALGORITHM, manifest_digest

__all__ = [
    "MANIFEST_ALGORITHM",
    "MAX_MANIFEST_BYTES",
    "ManifestError",
    "load_manifest",
    "manifest_digest",
    "validate_manifest",
]

#: A manifest file larger than this is refused before it is parsed.
MAX_MANIFEST_BYTES = 4 * 1024 * 1024
_HEX = frozenset("0123456789abcdef")
_ENTRY_KEYS = frozenset({"path", "size", "sha256", "executable"})


class ManifestError(ValueError):
    """A manifest that is not a well-formed ``sha256-tree-v1`` manifest within the limits."""


def _safe_path(path: object) -> bool:
    return (
        isinstance(path, str)
        and bool(path)
        and "\x00" not in path
        and "\\" not in path
        and not path.startswith("/")
        and posixpath.normpath(path) == path
        and path not in (".", "..")
        and not path.startswith("../")
    )


def validate_manifest(loaded: object, *, max_files: int, max_bytes: int) -> dict[str, Any]:
    """``loaded`` as a manifest, or :class:`ManifestError` naming what is wrong."""
    if not isinstance(loaded, dict):
        raise ManifestError("the manifest is not an object")
    manifest = cast(dict[str, Any], loaded)
    if set(manifest) != {"algorithm", "files", "total_bytes"}:
        raise ManifestError("the manifest has other keys than algorithm, files, total_bytes")
    if manifest["algorithm"] != MANIFEST_ALGORITHM:
        raise ManifestError(f"the manifest's algorithm is not {MANIFEST_ALGORITHM}")
    files: object = manifest["files"]
    if not isinstance(files, list):
        raise ManifestError("the manifest's files are not a list")
    entries = cast(list[object], files)
    if len(entries) > max_files:
        raise ManifestError(f"the manifest lists more than {max_files} files")
    seen: set[str] = set()
    total = 0
    for item in entries:
        if not isinstance(item, dict) or frozenset(cast(dict[str, Any], item)) != _ENTRY_KEYS:
            raise ManifestError("the manifest holds a malformed file entry")
        entry = cast(dict[str, Any], item)
        path, size, digest = entry["path"], entry["size"], entry["sha256"]
        if not _safe_path(path) or path in seen:
            raise ManifestError(f"the manifest holds an unsafe or repeated path {path!r}")
        seen.add(path)
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ManifestError(f"the manifest gives {path} an invalid size")
        if not isinstance(digest, str) or len(digest) != 64 or not set(digest) <= _HEX:
            raise ManifestError(f"the manifest gives {path} an invalid sha256")
        if not isinstance(entry["executable"], bool):
            raise ManifestError(f"the manifest gives {path} an invalid executable flag")
        total += size
    declared = manifest["total_bytes"]
    if isinstance(declared, bool) or not isinstance(declared, int) or declared != total:
        raise ManifestError("the manifest's total_bytes is not the sum of its files' sizes")
    if total > max_bytes:
        raise ManifestError(f"the manifest describes more than {max_bytes} bytes")
    return manifest


def load_manifest(path: str, *, max_files: int, max_bytes: int) -> tuple[str, dict[str, Any]]:
    """``(digest, manifest)`` of the manifest file at ``path`` (a final link is refused)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise ManifestError(f"the manifest cannot be read: {exc.strerror}") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise ManifestError("the manifest is not a regular file")
        with os.fdopen(os.dup(fd), "rb") as file:
            body = file.read(MAX_MANIFEST_BYTES + 1)
    finally:
        os.close(fd)
    if len(body) > MAX_MANIFEST_BYTES:
        raise ManifestError(f"the manifest is larger than {MAX_MANIFEST_BYTES} bytes")
    try:
        loaded: object = json.loads(body)
    except (UnicodeDecodeError, ValueError):
        raise ManifestError("the manifest is not valid JSON") from None
    manifest = validate_manifest(loaded, max_files=max_files, max_bytes=max_bytes)
    return manifest_digest(manifest), manifest
