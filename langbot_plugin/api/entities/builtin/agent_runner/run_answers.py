"""Answers of the run API that Protocol v1's namespaces return (seed 003): rerank scores,
a tool's detail, state writes, artifact metadata and mounts.

They live in the entities layer so that ``ctx.api``'s type
(:mod:`~langbot_plugin.api.entities.builtin.agent_runner.run_namespaces`) can name them;
the action catalogue (``langbot_plugin.protocol.host_api``) uses them as its wire types.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, with_config
from typing_extensions import TypedDict

__all__ = [
    "ArtifactMetadata",
    "ArtifactMount",
    "RerankResult",
    "StateDeleteResult",
    "StateGetResult",
    "StateSetResult",
    "ToolDetail",
]

#: As the catalogue's results: unknown keys kept, validators built on first use.
_ANSWER = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)


@with_config(ConfigDict(extra="allow"))
class RerankResult(TypedDict):
    """One scored document of a rerank: its index in the input and its score."""

    index: int
    relevance_score: float


@with_config(ConfigDict(extra="allow"))
class ToolDetail(TypedDict, total=False):
    """A tool's description for a model: name, description, JSON-schema parameters."""

    name: str
    description: str
    parameters: dict[str, Any]


@with_config(ConfigDict(extra="allow"))
class StateGetResult(TypedDict, total=False):
    """``value`` is ``None`` when the key is not set."""

    value: Any


@with_config(ConfigDict(extra="allow"))
class StateSetResult(TypedDict, total=False):
    """``success`` tells whether the value was stored."""

    success: bool


@with_config(ConfigDict(extra="allow"))
class StateDeleteResult(TypedDict, total=False):
    """``success`` is false when the key did not exist."""

    success: bool


class ArtifactMetadata(BaseModel):
    """What the host knows of an artifact (never its bytes)."""

    model_config = _ANSWER

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


class ArtifactMount(BaseModel):
    """Where an artifact is seen, read-only, by the commands the run runs in its Box:
    ``path`` is ``<mount_path>/<file name>``; ``mount_path`` is
    ``/opt/langbot-artifacts/<hex>`` of its ``content_digest`` (``sha256:<hex>``, the
    digest of the one-file tree holding it)."""

    model_config = _ANSWER

    artifact_id: str
    path: str
    mount_path: str
    content_digest: str
