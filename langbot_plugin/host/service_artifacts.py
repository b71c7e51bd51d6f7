"""The artifact actions of the service table: ``artifact_metadata``,
``artifact_read``, ``artifact_upload_begin`` and ``artifact_upload_append`` (seed 003's
Protocol v1), served from the host's :class:`~langbot_plugin.host.artifacts.ArtifactStore`.

Authorized like every run-scoped call (:meth:`RunServices.session`, with the run's
``available_apis`` flag), then scoped to the run's conversation by the store.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langbot_plugin.host.artifacts import ArtifactStore
from langbot_plugin.protocol.host_api import artifacts as art
from langbot_plugin.protocol.host_api.common import RunScopedParams
from langbot_plugin.protocol.spec import ActionTable
from langbot_plugin.rpc import RequestContext

if TYPE_CHECKING:
    from langbot_plugin.host.services import RunServices

__all__ = ["register_artifact_actions"]


def register_artifact_actions(
    table: ActionTable, services: RunServices, store: ArtifactStore
) -> None:
    async def metadata(p: art.ArtifactRefParams, ctx: RequestContext) -> art.ArtifactMetadata:
        session = services.session(p.run_id, ctx, art.ARTIFACT_METADATA)
        return await store.metadata(session.scope, p.artifact_id)

    async def read(p: art.ArtifactReadParams, ctx: RequestContext) -> art.ArtifactChunk:
        session = services.session(p.run_id, ctx, art.ARTIFACT_READ)
        return await store.read(session.scope, p.artifact_id, p.offset, p.length)

    async def begin(p: RunScopedParams, ctx: RequestContext) -> art.ArtifactUpload:
        session = services.session(p.run_id, ctx, art.ARTIFACT_UPLOAD_BEGIN)
        return await store.uploads.begin(session.run_id)

    async def append(p: art.ArtifactAppendParams, ctx: RequestContext) -> art.ArtifactUpload:
        session = services.session(p.run_id, ctx, art.ARTIFACT_UPLOAD_APPEND)
        return await store.uploads.append(session.run_id, p.upload_id, p.offset, p.content_base64)

    table.add(art.ARTIFACT_METADATA, metadata)
    table.add(art.ARTIFACT_READ, read)
    table.add(art.ARTIFACT_UPLOAD_BEGIN, begin)
    table.add(art.ARTIFACT_UPLOAD_APPEND, append)
