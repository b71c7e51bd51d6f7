"""What a ``lbp dev`` session asks of the plugin beside runs: commands, tools, events
and page calls, each reported as events (a failure as ``call.failed``, with where the
plugin's code raised). :class:`SessionCalls` is a part of
:class:`~langbot_plugin.dev.session.DevSession`."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from langbot_plugin.api.entities.builtin.command.context import typed_command
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.dev.errors import DevError
from langbot_plugin.dev.event_fields import event_fields
from langbot_plugin.dev.events import EventHub, failed
from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol import component_calls as calls
from langbot_plugin.rpc import RPCError

__all__ = ["SessionCalls"]


class SessionCalls:
    """The session's calls into the plugin other than runs (see the module docstring)."""

    events: EventHub
    author: str
    name: str

    @property
    def client(self) -> PluginRuntimeClient:
        raise NotImplementedError

    @property
    def host(self) -> LocalHost:
        raise NotImplementedError

    async def wait_ready(self, seconds: float = 30.0) -> None:
        raise NotImplementedError

    def _session_info(self) -> dict[str, Any]:
        raise NotImplementedError

    def _next_query(self) -> int:
        raise NotImplementedError

    async def command(self, text: str) -> list[str]:
        """Run ``!text`` (``name args...``); the texts of its replies."""
        await self.wait_ready()
        text = text.strip()
        if not text:
            raise DevError("a command needs a name, e.g. !hello")
        # Split as the host splits it: two spaces make an empty parameter there too.
        context = typed_command(
            text, session=self._session_info(), privilege=2, query_id=self._next_query()
        )
        name = context["command"]
        replies: list[str] = []
        async with self._reporting("command", name):
            items = await self.client.execute_command(context)
        for item in items:
            shown = str(item.get("text") or "")
            if not shown and item.get("image_url"):
                shown = f"[image {item['image_url']}]"
            replies.append(shown)
            await self.events.emit("command.reply", {"command": name, "text": shown})
        return replies

    async def call_tool(self, name: str, parameters: dict[str, Any]) -> Any:
        """Call the plugin's tool ``name`` as LangBot's tool loader does."""
        await self.wait_ready()
        async with self._reporting("tool", name):
            result = await self.client.call_tool(
                name, parameters, session=self._session_info(), query_id=self._next_query()
            )
        await self.events.emit("tool.reply", {"name": name, "result": result})
        return result

    async def emit_event(self, name: str, data: dict[str, Any]) -> dict[str, Any]:
        """Emit event ``name`` to the plugin's listeners; ``data`` are its fields, the
        chat's own filled in (:func:`~langbot_plugin.dev.event_fields.event_fields`)."""
        fields = event_fields(name, data)
        await self.wait_ready()
        context = {
            "query_id": self._next_query(),
            "event_name": name,
            "event": {**fields, "event_name": name},
        }
        before = len(self.host.queries.sent)
        result = await self.client.emit_event(context)
        answer = result.event_context
        replies = [sent.text for sent in self.host.queries.sent[before:]]
        chain = (answer.get("event") or {}).get("reply_message_chain")
        if chain:  # what the listener set as the reply LangBot sends
            replies.append(str(MessageChain.model_validate(chain)))
        for failure in result.failures:
            await self.events.emit("call.failed", failed("listener", name, failure))
        await self.events.emit(
            "event.reply",
            {
                "name": name,
                "result": answer,
                "replies": replies,
                "failed": [f.plugin for f in result.failures],
            },
        )
        return answer

    @asynccontextmanager
    async def _reporting(self, kind: str, name: str) -> AsyncGenerator[None]:
        """A failed call is also a ``call.failed`` event (with where the plugin raised)."""
        try:
            yield
        except RPCError as exc:
            await self.events.emit("call.failed", failed(kind, name, exc))
            raise

    async def page_api(self, page_id: str, endpoint: str, method: str, body: Any) -> dict[str, Any]:
        """What the plugin's page ``page_id`` answers a ``langbot.api`` call (its
        ``handle_api``, through the runtime as LangBot calls it)."""
        await self.wait_ready()
        params = {"page_id": page_id, "endpoint": endpoint, "method": method, "body": body}
        answer = await self.client.call_component(calls.PAGE_API, self.author, self.name, params)
        await self.events.emit(
            "page.call",
            {
                "page": page_id,
                "method": method,
                "endpoint": endpoint,
                "answer": answer.model_dump(),
            },
        )
        return answer.model_dump()
