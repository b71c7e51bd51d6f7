"""Artifacts in a run's Box, by content address (seed 003's Protocol v1, our host
library), the way the Box mounts skill revisions.

``artifact_mount`` lays the artifact out once under the host's artifact root (one of
the Box's ``allowed_mount_roots``) as a one-file tree with its ``sha256-tree-v1``
manifest (``<root>/<hex>/package/<file name>``, ``<root>/<hex>/manifest.json``), and
every later ``exec`` of the run carries the content-addressed read-only mount at
``/opt/langbot-artifacts/<hex>`` (docs/protocol-v1.md, ``box_runtime.artifacts``). A
tree lives while a live run mounts it (:meth:`ArtifactTrees.release`); at most
:data:`MAX_MOUNTS` a run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from pathlib import Path

import anyio.to_thread

from langbot_plugin.protocol.host_api.artifacts import ArtifactMetadata, ArtifactMount
from langbot_plugin.protocol.tree_digest import ARTIFACT_MOUNT_ROOT, file_manifest
from langbot_plugin.rpc.errors import TooManyRequestsError

__all__ = ["MAX_MOUNTS", "ArtifactTrees", "file_name"]

MAX_MOUNTS = 16

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9 ._+-]{0,127}$")


def file_name(artifact: ArtifactMetadata) -> str:
    """The name the artifact's file has in its tree."""
    name = artifact.name or ""
    return name if _NAME.match(name) and ".." not in name else artifact.artifact_id


class ArtifactTrees:
    """One-file trees under ``root`` and the mounts each run asked for."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        #: run id -> content digest -> the extra mount its commands carry.
        self.mounts: dict[str, dict[str, dict[str, str]]] = {}

    def lay_out(self, name: str, content: bytes) -> tuple[str, Path]:
        """The tree of ``content`` as ``name`` (written unless it exists): digest, dir."""
        digest, manifest = file_manifest(name, content)
        final = self.root / digest.removeprefix("sha256:")
        if final.is_dir():
            return digest, final
        self.root.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=".staging-", dir=self.root))
        try:
            (staging / "package").mkdir()
            (staging / "package" / name).write_bytes(content)
            (staging / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
            try:
                staging.rename(final)
            except OSError:
                if not final.is_dir():  # not another writer's identical tree
                    raise
        finally:
            shutil.rmtree(staging, ignore_errors=True)
        return digest, final

    async def mount(self, run_id: str, artifact: ArtifactMetadata, content: bytes) -> ArtifactMount:
        """Lay ``artifact`` out (in a worker thread) and add it to the run's mounts."""
        mine = self.mounts.setdefault(run_id, {})
        name = file_name(artifact)
        digest, tree = await anyio.to_thread.run_sync(self.lay_out, name, content)
        while not tree.is_dir():  # another run's end removed it while we laid it out
            digest, tree = await anyio.to_thread.run_sync(self.lay_out, name, content)
        if digest not in mine and len(mine) >= MAX_MOUNTS:
            raise TooManyRequestsError(
                f"a run may mount at most {MAX_MOUNTS} artifacts", details={"limit": MAX_MOUNTS}
            )
        mount_path = f"{ARTIFACT_MOUNT_ROOT}/{digest.removeprefix('sha256:')}"
        mine[digest] = {
            "host_path": str(tree / "package"),
            "mount_path": mount_path,
            "mode": "ro",
            "content_digest": digest,
            "manifest_path": str(tree / "manifest.json"),
        }
        return ArtifactMount(
            artifact_id=artifact.artifact_id,
            path=f"{mount_path}/{name}",
            mount_path=mount_path,
            content_digest=digest,
        )

    def of_run(self, run_id: str) -> list[dict[str, str]]:
        """The extra mounts of the run's commands."""
        return list(self.mounts.get(run_id, {}).values())

    def release(self, run_id: str) -> None:
        """Forget the run's mounts and remove the trees no live run mounts any more (the
        bytes stay in the artifact store; a later mount lays them out again)."""
        gone = self.mounts.pop(run_id, {})
        live = {digest for mounts in self.mounts.values() for digest in mounts}
        for digest in gone.keys() - live:
            shutil.rmtree(self.root / digest.removeprefix("sha256:"), ignore_errors=True)
