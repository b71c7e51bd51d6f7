"""Run-scoped artifact actions (seed 003's Protocol v1): reading the artifacts of the
run's conversation, uploading one too large for one ``artifact.created`` result, and
mounting one in the run's Box. Each needs its flag in ``available_apis``; the released
host has none of them, our host library serves them (:mod:`langbot_plugin.host.artifacts`).
An upload: ``artifact_upload_begin`` gives an ``upload_id``, each
``artifact_upload_append`` adds at most :data:`MAX_UPLOAD_PIECE_BYTES` at ``offset``,
and an ``artifact.created`` naming the ``upload_id`` commits it (at most
:data:`MAX_ARTIFACT_BYTES`).
"""

from __future__ import annotations

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.run_answers import (
    ArtifactMetadata,
    ArtifactMount,
)
from langbot_plugin.protocol.host_api.common import RunScopedParams, to_host
from langbot_plugin.protocol.spec import Result

__all__ = [
    "ARTIFACT_ACTIONS",
    "ARTIFACT_METADATA",
    "ARTIFACT_MOUNT",
    "ARTIFACT_READ",
    "ARTIFACT_UPLOAD_APPEND",
    "ARTIFACT_UPLOAD_BEGIN",
    "MAX_ARTIFACT_BYTES",
    "MAX_RANGE_READ_BYTES",
    "MAX_UPLOAD_PIECE_BYTES",
    "ArtifactAppendParams",
    "ArtifactChunk",
    "ArtifactMetadata",
    "ArtifactMount",
    "ArtifactReadParams",
    "ArtifactRefParams",
    "ArtifactUpload",
]

#: The most one ``artifact_read`` returns (seed 003's range-read limit).
MAX_RANGE_READ_BYTES = 10 * 1024 * 1024
#: The most one artifact holds (an upload's total).
MAX_ARTIFACT_BYTES = 64 * 1024 * 1024
#: The most one ``artifact_upload_append`` carries (its base64 fits one frame).
MAX_UPLOAD_PIECE_BYTES = 512 * 1024


class ArtifactRefParams(RunScopedParams):
    artifact_id: str


class ArtifactReadParams(ArtifactRefParams):
    offset: int = Field(default=0, ge=0)
    length: int = Field(default=65536, ge=1)


class ArtifactChunk(Result):
    """``length`` bytes (base64) from ``offset``; ``eof`` when the artifact ends there."""

    artifact_id: str
    offset: int
    content_base64: str
    eof: bool


class ArtifactAppendParams(RunScopedParams):
    upload_id: str
    offset: int = Field(ge=0)
    content_base64: str


class ArtifactUpload(Result):
    """An upload so far: its id and how many bytes it holds (the next ``offset``)."""

    upload_id: str
    size_bytes: int = 0
    max_bytes: int = MAX_ARTIFACT_BYTES
    piece_bytes: int = MAX_UPLOAD_PIECE_BYTES


ARTIFACT_METADATA = to_host(
    "artifact_metadata", ArtifactRefParams, ArtifactMetadata, doc="needs artifact_metadata"
)
ARTIFACT_READ = to_host(
    "artifact_read", ArtifactReadParams, ArtifactChunk, doc="needs artifact_read; up to 10 MiB"
)
ARTIFACT_UPLOAD_BEGIN = to_host(
    "artifact_upload_begin", RunScopedParams, ArtifactUpload, doc="needs artifact_upload"
)
ARTIFACT_UPLOAD_APPEND = to_host(
    "artifact_upload_append",
    ArtifactAppendParams,
    ArtifactUpload,
    doc="needs artifact_upload; up to 512 KiB a call",
)
ARTIFACT_MOUNT = to_host(
    "artifact_mount",
    ArtifactRefParams,
    ArtifactMount,
    doc="needs artifact_read and a bound Box",
)
ARTIFACT_ACTIONS = (
    ARTIFACT_METADATA,
    ARTIFACT_READ,
    ARTIFACT_UPLOAD_BEGIN,
    ARTIFACT_UPLOAD_APPEND,
    ARTIFACT_MOUNT,
)
