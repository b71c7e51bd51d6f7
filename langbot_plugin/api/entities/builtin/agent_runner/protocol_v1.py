"""Parts of the run context only seed 003's Protocol v1 defines: ``ctx.bootstrap``,
``ctx.runtime.host`` / ``locale`` / ``timezone`` / ``static_refs`` and
``ctx.resources.files`` (what the released host sends instead: ``docs/protocol-v1.md``).

They are not declared fields: a context dumps exactly what the host sent, as before,
and properties read them typed from what the host did send (the context keeps unknown
keys); ``ctx.bootstrap`` exists only when the host inlined something.
"""

from __future__ import annotations

import base64
import hashlib
from typing import Any, TypeVar

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult

__all__ = [
    "ARTIFACT_CREATED",
    "ArtifactRef",
    "BootstrapContext",
    "FileResource",
    "StaticContextRef",
    "UploadedArtifact",
    "artifact_created",
    "extra_as",
]

#: Protocol v1's result type of a runner that made an artifact.
ARTIFACT_CREATED = "artifact.created"

M = TypeVar("M", bound=BaseModel)


class ArtifactRef(HostContextModel):
    """A reference to a host-held artifact (its bytes come through ``api.artifacts``)."""

    artifact_id: str
    artifact_type: str | None = None
    mime_type: str | None = None
    name: str | None = None
    size_bytes: int | None = None
    expires_at: float | None = None


class BootstrapContext(HostContextModel):
    """What a ``host_bootstrap`` or ``hybrid`` runner asked the host to inline. Messages
    are the host's dicts (``role``, ``content``); a self-managed runner gets none."""

    messages: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    summary: str | None = None
    artifacts: list[ArtifactRef] = Field(default_factory=list[ArtifactRef])
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class StaticContextRef(HostContextModel):
    """A stable reference (with version or hash) to static context: a system policy, a
    tool schema, a resource manifest."""

    ref: str | None = None
    version: str | None = None
    hash: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class FileResource(HostContextModel):
    """A file the run may read (a binding config file or a knowledge-base file)."""

    file_id: str
    kind: str | None = None
    name: str | None = None
    mime_type: str | None = None
    size: int | None = None


def extra_as(model: BaseModel, key: str, cls: type[M]) -> M | None:
    """The unknown key ``key`` the host sent in ``model``, as ``cls`` (``None`` if absent)."""
    raw = (model.model_extra or {}).get(key)
    if raw is None or isinstance(raw, cls):
        return raw
    return cls.model_validate(raw)


class UploadedArtifact(BaseModel):
    """An artifact's bytes uploaded in pieces (``api.artifacts.upload``), not committed
    until an ``artifact.created`` names it (:func:`artifact_created`)."""

    upload_id: str
    size_bytes: int
    sha256: str


def artifact_created(
    run_id: str,
    content: bytes | UploadedArtifact,
    *,
    artifact_type: str,
    artifact_id: str | None = None,
    mime_type: str = "application/octet-stream",
    name: str | None = None,
    ttl_seconds: float | None = None,
    metadata: dict[str, Any] | None = None,
) -> AgentRunResult:
    """An ``artifact.created`` result: ``content`` inline (at most 512 KiB), or an upload
    (:class:`UploadedArtifact`, up to 64 MiB) it commits. A Protocol v1 host keeps it for
    the conversation's later runs (``api.artifacts``, under ``artifact_id`` when given);
    the released host logs the type and ignores it."""
    data: dict[str, Any] = {
        "artifact_type": artifact_type,
        "mime_type": mime_type,
        "name": name,
        "metadata": dict(metadata or {}),
    }
    if isinstance(content, UploadedArtifact):
        data.update(content.model_dump())
    else:
        data["size_bytes"] = len(content)
        data["sha256"] = hashlib.sha256(content).hexdigest()
        data["content_base64"] = base64.b64encode(content).decode()
    if artifact_id is not None:
        data["artifact_id"] = artifact_id
    if ttl_seconds is not None:
        data["ttl_seconds"] = ttl_seconds
    return AgentRunResult(run_id=run_id, type=ARTIFACT_CREATED, data=data)
