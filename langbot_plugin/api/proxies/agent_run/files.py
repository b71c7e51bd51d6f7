"""Run-scoped file export and delivery (seed 004): ``export_box_files``, ``reply_files``.

A runner selects files of its Box with ``export_box_files(paths)`` and delivers the
opaque handles (:class:`BoxFile` ``id``) with ``reply_files(ids)`` or with its answer;
the rules and limits are ``docs/agent-runner.md``, "Files from the Box". The wire forms
are the released 4.11.2 host's (``reply_files`` is a ``call_platform_api``
``send_message`` on the run's ``event_reply`` context tool).
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.box import BoxFile
from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase
from langbot_plugin.protocol.box_export import (
    EXPORT_LIMITS,
    LIMIT_EXCEEDED,
    file_ids_problem,
    limit_refusal,
    paths_problem,
)
from langbot_plugin.protocol.host_api import box, messaging

__all__ = ["AgentRunFilesAPIMixin"]


class AgentRunFilesAPIMixin(AgentRunProxyBase):
    """``export_box_files`` (needs ``available_apis.box``) and ``reply_files`` (needs
    the ``event_reply`` tool)."""

    async def export_box_files(self, paths: list[str]) -> list[BoxFile]:
        """Export selected files of the run's Box (normalized absolute sandbox paths,
        at most 20 a call); returns the run's exported files not yet delivered, this
        batch's included. Nothing is sent to the user. A refused batch keeps its files."""
        self._require(box.EXPORT_BOX_FILES)
        selected: Any = paths
        problem = paths_problem(selected)
        if problem is not None:
            raise self._invalid(problem, paths=selected if isinstance(selected, list) else None)
        if len(paths) > EXPORT_LIMITS.call_files:
            message, details = limit_refusal(
                "call_files", EXPORT_LIMITS.call_files, len(paths), paths
            )
            raise AgentAPIException.of(LIMIT_EXCEEDED, message, details=details)
        answer = await self._send(box.EXPORT_BOX_FILES, box.ExportBoxFilesParams(paths=list(paths)))
        if answer.warning is None:
            return answer.items
        return [
            item if item.warning else item.model_copy(update={"warning": answer.warning})
            for item in answer.items
        ]

    async def reply_files(self, file_ids: list[str]) -> Any:
        """Send exported files (their :class:`BoxFile` ``id``) as a reply on the run's
        event; each file is delivered once. Returns the platform's answer."""
        self._require(messaging.CALL_PLATFORM_API, messaging.EVENT_REPLY_TOOL)
        ids: Any = file_ids
        problem = file_ids_problem(ids)
        if problem is not None:
            raise self._invalid(problem, file_ids=ids if isinstance(ids, list) else None)
        params = messaging.PlatformApiParams(
            action=messaging.SEND_MESSAGE.name,
            context_tool=messaging.EVENT_REPLY_TOOL,
            params={"message": []},
            file_ids=list(file_ids),
        )
        return (await self._send(messaging.CALL_PLATFORM_API, params)).result
