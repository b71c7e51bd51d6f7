"""Run-scoped reads of artifacts (seed 003's Protocol v1; needs
``available_apis.artifact_metadata`` / ``artifact_read``, which only a Protocol v1 host
such as our host library turns on). ``api.artifacts`` is the namespaced face."""

from __future__ import annotations

import base64

from langbot_plugin.api.proxies.agent_run.common import AgentAPIException, AgentRunProxyBase
from langbot_plugin.protocol.host_api import artifacts as art
from langbot_plugin.protocol.host_api.artifacts import ArtifactChunk, ArtifactMetadata

__all__ = ["AgentRunArtifactsAPIMixin"]


class AgentRunArtifactsAPIMixin(AgentRunProxyBase):
    """``artifact_metadata`` and ``artifact_read`` of the run's conversation."""

    async def artifact_metadata(self, artifact_id: str) -> ArtifactMetadata:
        """Type, MIME type, size, digest and expiry of an artifact (never its bytes)."""
        self._require(art.ARTIFACT_METADATA)
        return await self._send(
            art.ARTIFACT_METADATA, art.ArtifactRefParams(artifact_id=artifact_id)
        )

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
