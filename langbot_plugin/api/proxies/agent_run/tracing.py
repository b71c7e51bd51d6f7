"""The run API a 0.7-style runner sees as ``ctx.api``: the run proxy, with each
``call_tool``, ``call_platform_api``, ``send_message``, ``reply_message`` and
``reply_stream`` framed by ``tool_call.started`` / ``tool_call.completed`` results
(``docs/agent-runner.md``, before section 1); every other attribute is the proxy's own.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any, TypeVar

import anyio

from langbot_plugin.api.entities.builtin.agent_runner.context_binding import ResultSink
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.proxies.agent_run.api import AgentRunAPIProxy
from langbot_plugin.api.proxies.agent_run.namespaces import RunAPINamespaces
from langbot_plugin.api.proxies.agent_run.replies import (
    EVENT_REPLY_TOOL,
    ReplyStream,
    send_message_params,
)
from langbot_plugin.protocol.host_api.messaging import (
    PLATFORM_SEND_MESSAGE,
    traced_platform_call,
)

__all__ = ["TracedRunAPI"]

T = TypeVar("T")


def _as_record(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {"result": value}  # pyright: ignore[reportUnknownVariableType]


class TracedRunAPI(RunAPINamespaces):
    """``api`` with its calls traced into ``emit`` (see the module docstring); its
    namespaces (``ctx.api.tools.call``...) go through these traced methods too."""

    def __init__(self, api: AgentRunAPIProxy, emit: ResultSink, run_id: str | None = None) -> None:
        self._api = api
        self._emit = emit
        # the invocation's run (a test may hand in any object as the API)
        self._run_id = api.run_id if run_id is None else run_id

    def __getattr__(self, name: str) -> Any:
        return getattr(self._api, name)

    @property
    def run_id(self) -> str:
        return self._run_id

    async def _traced(
        self, name: str, parameters: dict[str, Any], call: Callable[[], Awaitable[T]]
    ) -> T:
        call_id = uuid.uuid4().hex
        await self._emit(AgentRunResult.tool_call_started(self.run_id, call_id, name, parameters))
        try:
            result = await call()
        except Exception as exc:
            failed = AgentRunResult.tool_call_completed(
                self.run_id, call_id, name, error=str(exc) or type(exc).__name__
            )
            await self._emit(failed)
            raise
        done = AgentRunResult.tool_call_completed(
            self.run_id, call_id, name, result=_as_record(result)
        )
        await self._emit(done)
        return result

    async def call_tool(self, tool_name: str, parameters: dict[str, Any]) -> Any:
        return await self._traced(
            tool_name, parameters, lambda: self._api.call_tool(tool_name, parameters)
        )

    async def call_platform_api(
        self, bot_uuid: str, action: str, params: dict[str, Any] | None = None
    ) -> Any:
        traced = {"bot_uuid": bot_uuid, **(params or {})}
        return await self._traced(
            traced_platform_call(action),
            traced,
            lambda: self._api.call_platform_api(bot_uuid, action, params),
        )

    async def send_message(
        self, bot_uuid: str, target_type: str, target_id: str, message_chain: MessageChain
    ) -> Any:
        params = send_message_params(target_type, target_id, message_chain)
        return await self.call_platform_api(bot_uuid, PLATFORM_SEND_MESSAGE, params)

    async def reply_message(self, message_chain: MessageChain, quote_origin: bool = False) -> Any:
        params = {"message": message_chain.model_dump(mode="json"), "quote_origin": quote_origin}
        return await self._traced(
            EVENT_REPLY_TOOL, params, lambda: self._api.reply_message(message_chain, quote_origin)
        )

    @asynccontextmanager
    async def reply_stream(self) -> AsyncGenerator[ReplyStream]:
        call_id = uuid.uuid4().hex
        started = AgentRunResult.tool_call_started(
            self.run_id, call_id, EVENT_REPLY_TOOL, {"stream": True}
        )
        await self._emit(started)
        try:
            async with self._api.reply_stream() as stream:
                yield stream
        except BaseException as exc:
            failed = AgentRunResult.tool_call_completed(
                self.run_id, call_id, EVENT_REPLY_TOOL, error=str(exc) or type(exc).__name__
            )
            with anyio.CancelScope(shield=True):
                await self._emit(failed)
            raise
        done = AgentRunResult.tool_call_completed(
            self.run_id, call_id, EVENT_REPLY_TOOL, result=_as_record(stream.result)
        )
        await self._emit(done)
