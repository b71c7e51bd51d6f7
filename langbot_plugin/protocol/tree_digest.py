"""The ``sha256-tree-v1`` digest of an immutable tree of files, shared by the Box (which
verifies the content-addressed mounts it is given, ``box_runtime.tree_manifest``) and the
hosts that lay such trees out (skill revisions; the artifacts our host library mounts).

A manifest is ``{"algorithm": "sha256-tree-v1", "files": [{"path", "size", "sha256",
"executable"}], "total_bytes"}``; the tree's digest is ``sha256:`` and the SHA-256 of
its canonical JSON (sorted keys, no spaces, UTF-8), so the same files always give the
same digest.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

__all__ = ["ARTIFACT_MOUNT_ROOT", "MANIFEST_ALGORITHM", "file_manifest", "manifest_digest"]

MANIFEST_ALGORITHM = "sha256-tree-v1"
#: Where a Box shows content-addressed mounts: ``<root>/<hex>`` of ``sha256:<hex>``.
ARTIFACT_MOUNT_ROOT = "/opt/langbot-artifacts"


def manifest_digest(manifest: dict[str, Any]) -> str:
    """``sha256:<hex>`` of the manifest's canonical JSON."""
    canonical = json.dumps(manifest, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return f"sha256:{hashlib.sha256(canonical.encode()).hexdigest()}"


def file_manifest(path: str, content: bytes) -> tuple[str, dict[str, Any]]:
    """``(digest, manifest)`` of a tree holding one regular, non-executable file."""
    entry = {
        "path": path,
        "size": len(content),
        "sha256": hashlib.sha256(content).hexdigest(),
        "executable": False,
    }
    manifest = {"algorithm": MANIFEST_ALGORITHM, "files": [entry], "total_bytes": len(content)}
    return manifest_digest(manifest), manifest
