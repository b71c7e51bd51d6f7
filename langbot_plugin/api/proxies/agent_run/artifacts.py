"""Run-scoped reads and uploads of artifacts (seed 003's Protocol v1; needs
``available_apis.artifact_metadata`` / ``artifact_read`` / ``artifact_upload``, which
only a Protocol v1 host such as our host library turns on). ``api.artifacts`` is the
namespaced face."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import AsyncIterable, AsyncIterator, Iterable

from langbot_plugin.api.entities.builtin.agent_runner.protocol_v1 import UploadedArtifact
from langbot_plugin.api.proxies.agent_run.common import AgentAPIException, AgentRunProxyBase
from langbot_plugin.protocol.host_api import artifacts as art
from langbot_plugin.protocol.host_api.artifacts import ArtifactChunk, ArtifactMetadata

__all__ = ["AgentRunArtifactsAPIMixin"]


class AgentRunArtifactsAPIMixin(AgentRunProxyBase):
    """``artifact_metadata`` and ``artifact_read`` of the run's conversation, and
    ``artifact_upload`` of an artifact too large for one result."""

    async def artifact_metadata(self, artifact_id: str) -> ArtifactMetadata:
        """Type, MIME type, size, digest and expiry of an artifact (never its bytes)."""
        self._require(art.ARTIFACT_METADATA)
        params = art.ArtifactRefParams(artifact_id=artifact_id)
        return await self._send(art.ARTIFACT_METADATA, params)

    async def artifact_read(
        self, artifact_id: str, offset: int = 0, length: int = 65536
    ) -> ArtifactChunk:
        """Up to ``length`` bytes from ``offset`` (at most 10 MiB a call)."""
        self._require(art.ARTIFACT_READ)
        if offset < 0 or length < 1:
            raise self._invalid("offset must be >= 0 and length >= 1", offset=offset, length=length)
        if length > art.MAX_RANGE_READ_BYTES:
            raise AgentAPIException.of(
                "payload_too_large",
                f"a range read returns at most {art.MAX_RANGE_READ_BYTES} bytes, not {length}",
                details={"limit": art.MAX_RANGE_READ_BYTES, "actual": length},
            )
        params = art.ArtifactReadParams(artifact_id=artifact_id, offset=offset, length=length)
        return await self._send(art.ARTIFACT_READ, params)

    async def artifact_bytes(self, artifact_id: str, offset: int = 0, length: int = 65536) -> bytes:
        """:meth:`artifact_read`'s bytes."""
        chunk = await self.artifact_read(artifact_id, offset, length)
        return base64.b64decode(chunk.content_base64)

    async def artifact_mount(self, artifact_id: str) -> art.ArtifactMount:
        """Show the artifact, read-only, to the commands the run runs in its bound Box
        (``exec``), at ``answer.path`` (``/opt/langbot-artifacts/<hex>/<file name>``)."""
        self._require(art.ARTIFACT_MOUNT)
        self._require_api("box", art.ARTIFACT_MOUNT.name)
        return await self._send(art.ARTIFACT_MOUNT, art.ArtifactRefParams(artifact_id=artifact_id))

    async def artifact_upload(
        self, content: bytes | Iterable[bytes] | AsyncIterable[bytes]
    ) -> UploadedArtifact:
        """Send ``content`` (bytes, or pieces of any size) to the host in pieces of at
        most 512 KiB; the answer goes into ``artifact_created(run_id, uploaded, ...)``,
        which commits it (at most 64 MiB in all)."""
        self._require(art.ARTIFACT_UPLOAD_BEGIN)
        upload = await self._send(art.ARTIFACT_UPLOAD_BEGIN, art.ARTIFACT_UPLOAD_BEGIN.params())
        digest = hashlib.sha256()
        size = 0
        async for piece in _pieces(content, min(upload.piece_bytes, art.MAX_UPLOAD_PIECE_BYTES)):
            params = art.ArtifactAppendParams(
                upload_id=upload.upload_id,
                offset=size,
                content_base64=base64.b64encode(piece).decode(),
            )
            size = (await self._send(art.ARTIFACT_UPLOAD_APPEND, params)).size_bytes
            digest.update(piece)
        return UploadedArtifact(
            upload_id=upload.upload_id, size_bytes=size, sha256=digest.hexdigest()
        )


async def _chunks(content: bytes | Iterable[bytes] | AsyncIterable[bytes]) -> AsyncIterator[bytes]:
    if isinstance(content, AsyncIterable):
        async for chunk in content:
            yield chunk
    elif isinstance(content, bytes | bytearray | memoryview):
        yield bytes(content)
    else:
        for chunk in content:
            yield chunk


async def _pieces(
    content: bytes | Iterable[bytes] | AsyncIterable[bytes], size: int
) -> AsyncIterator[bytes]:
    """``content`` cut into pieces of at most ``size`` bytes."""
    pending = bytearray()
    async for chunk in _chunks(content):
        pending += chunk
        while len(pending) >= size:
            yield bytes(pending[:size])
            del pending[:size]
    if pending:
        yield bytes(pending)
