"""Run-scoped Box access: status, the workspace's Boxes, acquire, bind, files in and out.

Each call needs ``available_apis.box``. A run binds one Box (``bind_box``; it cannot
switch afterwards); ``import_box_attachments`` copies the run's input attachments into
it and ``export_box_files`` takes files out as :class:`BoxFile` handles, which
``reply_files`` (or ``message_completed(file_ids=...)``) sends. Where a runner's reuse
key meets the host-owned scope of seed 000 is the host's business (``docs/agent-runner.md``).
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.box import (
    BoxBinding,
    BoxFile,
    BoxSession,
    BoxStatus,
)
from langbot_plugin.api.proxies.agent_run.files import AgentRunFilesAPIMixin
from langbot_plugin.protocol.host_api import box
from langbot_plugin.protocol.host_api.common import RunScopedParams

__all__ = ["AgentRunBoxAPIMixin"]


class AgentRunBoxAPIMixin(AgentRunFilesAPIMixin):
    """The Box calls of a run (0.7 ``RunnerBoxAPIMixin``); ``export_box_files`` and
    ``reply_files`` are :class:`~.files.AgentRunFilesAPIMixin`'s."""

    async def get_box_status(self) -> BoxStatus:
        """Whether the Box is enabled and reachable, and the workspace's capacity."""
        self._require(box.GET_BOX_STATUS)
        return await self._send(box.GET_BOX_STATUS, RunScopedParams())

    async def list_boxes(self) -> list[BoxSession]:
        """The Boxes of the workspace."""
        self._require(box.LIST_BOXES)
        return (await self._send(box.LIST_BOXES, RunScopedParams())).items

    async def acquire_box(
        self, reuse_key: str, options: dict[str, Any] | None = None
    ) -> BoxSession:
        """The Box for ``reuse_key`` in the host-owned scope, created when missing
        (``options``: ``image`` only)."""
        self._require(box.ACQUIRE_BOX)
        params = box.AcquireBoxParams(reuse_key=reuse_key, options=dict(options or {}))
        return await self._send(box.ACQUIRE_BOX, params)

    async def bind_box(self, box_id: str) -> BoxBinding:
        """Bind a Box to this run; the run's sandbox tools and files then use it."""
        self._require(box.BIND_BOX)
        return await self._send(box.BIND_BOX, box.BindBoxParams(box_id=box_id))

    async def import_box_attachments(
        self, attachment_ids: list[str] | None = None
    ) -> list[BoxFile]:
        """Copy input attachments (by ``ref``; all when None) into the bound Box."""
        self._require(box.IMPORT_BOX_ATTACHMENTS)
        params = box.ImportBoxAttachmentsParams(attachment_ids=attachment_ids)
        return (await self._send(box.IMPORT_BOX_ATTACHMENTS, params)).items
