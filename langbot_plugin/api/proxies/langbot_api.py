"""The plugin-level host API (``BasePlugin`` inherits it).

Each method sends one action to the host through the runtime and returns the part of
the answer the reference returned. Errors are the channel's
:class:`~langbot_plugin.rpc.errors.RPCError` subclasses (with stable codes).
Run-scoped code (agent runners) uses
:class:`~langbot_plugin.api.proxies.agent_run.AgentRunAPIProxy` instead, which checks
the run's grants first.
"""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Sequence
from typing import Any

from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.entities.builtin.provider.message import (
    LLMInvokeResult,
    LLMStreamEvent,
    Message,
    MessageChunk,
)
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.proxies._knowledge_api import KnowledgeAPIMixin
from langbot_plugin.api.proxies._plugin_api import (
    DEFAULT_TIMEOUT,
    LLM_TIMEOUT,
    expect,
    llm_payload,
    stream_event,
)

__all__ = ["DEFAULT_TIMEOUT", "LangBotAPIProxy", "llm_payload", "stream_event"]


class LangBotAPIProxy(KnowledgeAPIMixin):
    """Host APIs available to a whole plugin."""

    # ------------------------------------------------------------------ host and bots

    async def get_langbot_version(self) -> str:
        """The host's LangBot version."""
        return expect(await self._call("get_langbot_version", {}), "version", "get_langbot_version")

    async def get_bots(self) -> list[str]:
        """The uuids of the workspace's bots."""
        return expect(await self._call("get_bots", {}), "bots", "get_bots")

    async def get_bot_info(self, bot_uuid: str) -> dict[str, Any]:
        """A bot's information."""
        return expect(
            await self._call("get_bot_info", {"bot_uuid": bot_uuid}), "bot", "get_bot_info"
        )

    async def send_message(
        self, bot_uuid: str, target_type: str, target_id: str, message_chain: MessageChain
    ) -> Any:
        """Send a chain through a bot; ``target_type`` is ``"person"`` or ``"group"``."""
        data = {
            "bot_uuid": bot_uuid,
            "target_type": target_type,
            "target_id": target_id,
            "message_chain": message_chain.model_dump(mode="json"),
        }
        return (await self._call("send_message", data)).get("result")

    async def call_platform_api(
        self, bot_uuid: str, action: str, params: dict[str, Any] | None = None
    ) -> Any:
        """Call an adapter API of a bot (``get_group_info``, ...)."""
        data = {"bot_uuid": bot_uuid, "action": action, "params": dict(params or {})}
        return expect(await self._call("call_platform_api", data), "result", "call_platform_api")

    # ------------------------------------------------------------------ models

    async def get_llm_models(self) -> list[str]:
        """The uuids of the workspace's LLM models."""
        return expect(await self._call("get_llm_models", {}), "llm_models", "get_llm_models")

    async def invoke_llm(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Message:
        """Ask a model for a complete answer."""
        result = await self.invoke_llm_with_usage(
            llm_model_uuid, messages, funcs, extra_args, timeout=timeout
        )
        return result.message

    async def invoke_llm_with_usage(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> LLMInvokeResult:
        """Like :meth:`invoke_llm`, with the provider's token usage when reported."""
        limit = timeout if timeout is not None else LLM_TIMEOUT
        data = {**llm_payload(llm_model_uuid, messages, funcs, extra_args), "timeout": limit}
        answer = await self._call("invoke_llm", data, timeout=limit)
        message = expect(answer, "message", "invoke_llm")
        return LLMInvokeResult.model_validate({"message": message, "usage": answer.get("usage")})

    async def invoke_llm_stream(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[MessageChunk]:
        """Stream a model's answer as chunks (each carrying the new text)."""
        async for event in self.invoke_llm_stream_events(
            llm_model_uuid, messages, funcs, extra_args, timeout=timeout
        ):
            if event.chunk is not None:
                yield event.chunk

    async def invoke_llm_stream_events(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> AsyncIterator[LLMStreamEvent]:
        """Stream a model's answer as events: chunks and usage reports.

        ``timeout`` bounds the wait for each item (default 120 s); when given it is
        also sent to the host.
        """
        data = llm_payload(llm_model_uuid, messages, funcs, extra_args)
        if timeout is not None:
            data["timeout"] = timeout
        per_item = timeout if timeout is not None else LLM_TIMEOUT
        async with self._channel().stream("invoke_llm_stream", data, timeout=per_item) as items:
            async for item in items:
                yield stream_event(item, "invoke_llm_stream")

    # ------------------------------------------------------------------ storage

    async def set_plugin_storage(self, key: str, value: bytes) -> None:
        """Store bytes under ``key`` in this plugin's storage."""
        await self._call("set_plugin_storage", {"key": key, "value_base64": _b64(value)})

    async def get_plugin_storage(self, key: str) -> bytes:
        """Bytes stored under ``key`` in this plugin's storage."""
        answer = await self._call("get_plugin_storage", {"key": key})
        return base64.b64decode(expect(answer, "value_base64", "get_plugin_storage"))

    async def get_plugin_storage_keys(self) -> list[str]:
        """The keys of this plugin's storage."""
        answer = await self._call("get_plugin_storage_keys", {})
        return expect(answer, "keys", "get_plugin_storage_keys")

    async def delete_plugin_storage(self, key: str) -> None:
        """Delete ``key`` from this plugin's storage."""
        await self._call("delete_plugin_storage", {"key": key})

    async def set_workspace_storage(self, key: str, value: bytes) -> None:
        """Store bytes under ``key`` in the workspace storage shared by plugins."""
        await self._call("set_workspace_storage", {"key": key, "value_base64": _b64(value)})

    async def get_workspace_storage(self, key: str) -> bytes:
        """Bytes stored under ``key`` in the workspace storage."""
        answer = await self._call("get_workspace_storage", {"key": key})
        return base64.b64decode(expect(answer, "value_base64", "get_workspace_storage"))

    async def get_workspace_storage_keys(self) -> list[str]:
        """The keys of the workspace storage."""
        answer = await self._call("get_workspace_storage_keys", {})
        return expect(answer, "keys", "get_workspace_storage_keys")

    async def delete_workspace_storage(self, key: str) -> None:
        """Delete ``key`` from the workspace storage."""
        await self._call("delete_workspace_storage", {"key": key})

    async def get_config_file(self, file_key: str) -> bytes:
        """A file uploaded through the plugin's config form."""
        answer = await self._call("get_config_file", {"file_key": file_key})
        return base64.b64decode(expect(answer, "file_base64", "get_config_file"))

    # ------------------------------------------------------------------ plugins and tools

    async def list_plugins_manifest(self) -> list[dict[str, Any]]:
        """The manifests of the installed plugins."""
        return expect(
            await self._call("list_plugins_manifest", {}), "plugins", "list_plugins_manifest"
        )

    async def list_commands(self) -> list[dict[str, Any]]:
        """The commands of all plugins."""
        return expect(await self._call("list_commands", {}), "commands", "list_commands")

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools the host offers (``author/plugin/tool`` names, schemas)."""
        return expect(await self._call("list_tools", {}), "tools", "list_tools")

    async def get_tool_detail(self, tool_name: str) -> dict[str, Any]:
        """One tool's name, description and parameter schema."""
        answer = await self._call("get_tool_detail", {"tool_name": tool_name})
        return expect(answer, "tool", "get_tool_detail")

    async def call_tool(
        self, tool_name: str, parameters: dict[str, Any], session: dict[str, Any], query_id: int
    ) -> Any:
        """Call a tool on behalf of a session and query."""
        data = {
            "tool_name": tool_name,
            "tool_parameters": parameters,
            "session": session,
            "query_id": query_id,
        }
        return expect(await self._call("call_tool", data, 180), "tool_response", "call_tool")


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")
