"""Run-scoped artifact actions (seed 003's Protocol v1): what a run may read of the
artifacts its conversation holds. Each needs its flag in the run's ``available_apis``
(``artifact_metadata``, ``artifact_read``). The released host (4.11.2) has neither
action; our host library serves both (:mod:`langbot_plugin.host.artifacts`).
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.protocol.host_api.common import RunScopedParams, to_host
from langbot_plugin.protocol.spec import Result

__all__ = [
    "ARTIFACT_METADATA",
    "ARTIFACT_READ",
    "MAX_RANGE_READ_BYTES",
    "ArtifactChunk",
    "ArtifactMetadata",
    "ArtifactReadParams",
    "ArtifactRefParams",
]

#: The most one ``artifact_read`` returns (seed 003's range-read limit).
MAX_RANGE_READ_BYTES = 10 * 1024 * 1024


class ArtifactRefParams(RunScopedParams):
    artifact_id: str


class ArtifactReadParams(ArtifactRefParams):
    offset: int = Field(default=0, ge=0)
    length: int = Field(default=65536, ge=1)


class ArtifactMetadata(Result):
    """What the host knows of an artifact (never its bytes)."""

    artifact_id: str
    artifact_type: str
    mime_type: str
    name: str | None = None
    size_bytes: int
    sha256: str
    created_at: float
    expires_at: float | None = None
    run_id: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class ArtifactChunk(Result):
    """``length`` bytes (base64) from ``offset``; ``eof`` when the artifact ends there."""

    artifact_id: str
    offset: int
    content_base64: str
    eof: bool


ARTIFACT_METADATA = to_host(
    "artifact_metadata", ArtifactRefParams, ArtifactMetadata, doc="needs artifact_metadata"
)
ARTIFACT_READ = to_host(
    "artifact_read", ArtifactReadParams, ArtifactChunk, doc="needs artifact_read; up to 10 MiB"
)
