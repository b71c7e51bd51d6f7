"""Skill revisions laid out as the released host's skill store publishes them.

The host (LangBot 4.11.2, ``langbot_plugin.skill_store``) keeps each revision in
``<skills root>/tenants/ws-<24 hex>/.langbot-skill-store/revisions/<hex>/`` as
``package/`` (the files) and ``manifest.json`` (``sha256-tree-v1``), and mounts an
activated revision on every ``exec`` with :func:`mount_of`'s dict
(``pkg/provider/tools/loaders/skill.py`` ``build_execution_mounts``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from box_runtime.skill_package import build_manifest

__all__ = ["Revision", "publish_revision"]

NAMESPACE = "ws-" + "0123456789abcdef01234567"


class Revision:
    """One published revision: its digest, its directories and the host's mount of it."""

    def __init__(self, directory: Path, digest: str) -> None:
        self.directory = directory
        self.digest = digest
        self.hex = digest.removeprefix("sha256:")
        self.package = directory / "package"
        self.manifest = directory / "manifest.json"
        #: Where a command sees it.
        self.path = f"/opt/langbot-artifacts/{self.hex}"

    def mount(self, **override: str) -> dict[str, str]:
        """The extra mount the host sends for it (``override`` forges a field)."""
        mount = {
            "host_path": str(self.package),
            "mount_path": self.path,
            "mode": "ro",
            "content_digest": self.digest,
            "manifest_path": str(self.manifest),
        }
        return {**mount, **override}


def publish_revision(skills_root: Path, files: dict[str, str | tuple[str, bool]]) -> Revision:
    """Publish ``files`` (relative path -> text, or (text, executable)) as a revision."""
    store = skills_root / "tenants" / NAMESPACE / ".langbot-skill-store" / "revisions"
    staging = store / f"staging-{os.getpid()}-{len(list(store.glob('*'))) if store.exists() else 0}"
    package = staging / "package"
    for relative, content in files.items():
        text, executable = (content, False) if isinstance(content, str) else content
        target = package / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
        target.chmod(0o755 if executable else 0o644)
    digest, manifest = build_manifest(str(package))
    (staging / "manifest.json").write_text(json.dumps(manifest))
    final = store / digest.removeprefix("sha256:")
    if final.exists():
        for path in sorted(staging.rglob("*"), reverse=True):
            path.unlink() if path.is_file() else path.rmdir()
        staging.rmdir()
    else:
        staging.rename(final)
    return Revision(final, digest)
