"""Run-scoped platform calls and explicit replies.

``reply_message`` and ``reply_stream`` (and the Box's ``reply_files``) answer on the run's own event
(the host's ``event_reply`` tool: the run must be granted it for ``call``);
``send_message`` and ``call_platform_api`` go through a named bot, authorized by the
host against the run's platform tools. All of them are ``call_platform_api`` /
``reply_stream`` actions carrying the run's ``run_id``.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any, Literal

import anyio

from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase
from langbot_plugin.protocol.host_api import messaging

__all__ = ["EVENT_REPLY_TOOL", "AgentRunReplyAPIMixin", "ReplyStream", "send_message_params"]

EVENT_REPLY_TOOL = messaging.EVENT_REPLY_TOOL


def send_message_params(
    target_type: str, target_id: str, message_chain: MessageChain
) -> dict[str, Any]:
    """The ``params`` of the ``send_message`` platform action."""
    return {
        "target_type": target_type,
        "target_id": target_id,
        "message": message_chain.model_dump(mode="json"),
    }


class ReplyStream:
    """One explicit streaming reply. Each :meth:`update` replaces the whole text so far
    (not a delta); the reply is finished when its ``async with`` block ends normally
    and aborted when it raises."""

    def __init__(self, api: AgentRunProxyBase) -> None:
        self._api = api
        self.stream_id = uuid.uuid4().hex
        self._text = ""
        self._closed = False
        self._lock = anyio.Lock()
        #: The host's answer to the last step.
        self.result: Any = None

    async def _step(self, operation: Literal["update", "finish", "abort"]) -> Any:
        params = messaging.ReplyStreamParams(
            stream_id=self.stream_id, operation=operation, text=self._text
        )
        answer = await self._api._send(messaging.REPLY_STREAM, params)  # pyright: ignore[reportPrivateUsage]
        self.result = answer.result
        return self.result

    async def update(self, text: str) -> Any:
        """Show ``text`` (the complete reply so far)."""
        if not isinstance(text, str) or len(text) > messaging.MAX_REPLY_STREAM_TEXT:  # pyright: ignore[reportUnnecessaryIsInstance]
            raise ValueError(
                f"reply text must be a string of at most {messaging.MAX_REPLY_STREAM_TEXT} "
                "characters"
            )
        async with self._lock:
            if self._closed:
                raise ValueError("this reply stream is closed")
            self._text = text
            return await self._step("update")

    async def close(self, operation: Literal["finish", "abort"]) -> None:
        """Finish (deliver) or abort the reply; a second close does nothing."""
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            await self._step(operation)


class AgentRunReplyAPIMixin(AgentRunProxyBase):
    """Replies on the run's event and platform calls through a bot."""

    async def _platform(self, params: messaging.PlatformApiParams) -> Any:
        return (await self._send(messaging.CALL_PLATFORM_API, params)).result

    async def call_platform_api(
        self, bot_uuid: str, action: str, params: dict[str, Any] | None = None
    ) -> Any:
        """Call an adapter API of a bot for this run."""
        request = messaging.PlatformApiParams(
            bot_uuid=bot_uuid, action=action, params=dict(params or {})
        )
        return await self._platform(request)

    async def send_message(
        self, bot_uuid: str, target_type: str, target_id: str, message_chain: MessageChain
    ) -> Any:
        """Send a chain through a bot (``target_type``: ``person`` or ``group``)."""
        params = send_message_params(target_type, target_id, message_chain)
        return await self.call_platform_api(bot_uuid, messaging.PLATFORM_SEND_MESSAGE, params)

    async def reply_message(self, message_chain: MessageChain, quote_origin: bool = False) -> Any:
        """Reply on the run's own event (needs the ``event_reply`` tool)."""
        self._require_resource("tool", EVENT_REPLY_TOOL, "call", messaging.CALL_PLATFORM_API.name)
        request = messaging.PlatformApiParams(
            action=messaging.PLATFORM_SEND_MESSAGE,
            context_tool=EVENT_REPLY_TOOL,
            params={"message": message_chain.model_dump(mode="json"), "quote_origin": quote_origin},
        )
        return await self._platform(request)

    @asynccontextmanager
    async def reply_stream(self) -> AsyncGenerator[ReplyStream]:
        """One explicit reply on the run's event, updated with full-text snapshots;
        needs ``available_apis.reply_stream`` and the ``event_reply`` tool. A host
        whose platform cannot stream buffers the updates and sends once at the end."""
        self._require(messaging.REPLY_STREAM)
        self._require_resource("tool", EVENT_REPLY_TOOL, "call", messaging.REPLY_STREAM.name)
        stream = ReplyStream(self)
        try:
            yield stream
        except BaseException:
            with anyio.CancelScope(shield=True), anyio.move_on_after(5):
                try:
                    await stream.close("abort")
                except Exception:  # the host closes the run's open streams itself too
                    pass
            raise
        await stream.close("finish")
