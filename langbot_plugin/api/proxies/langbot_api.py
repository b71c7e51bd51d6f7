"""The plugin-level host API (``BasePlugin`` inherits it).

Each method sends one action of the catalogue (:mod:`langbot_plugin.protocol.host_api`)
to the host through the runtime and returns the part of the answer the reference
returned. Errors are the channel's :class:`~langbot_plugin.rpc.errors.RPCError`
subclasses (with stable codes); an answer that does not fit its declaration is a
:class:`~langbot_plugin.rpc.errors.MalformedMessageError`. Run-scoped code (agent
runners) uses :class:`~langbot_plugin.api.proxies.agent_run.AgentRunAPIProxy` instead,
which checks the run's grants first.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.box import BoxSession, BoxStatus
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.entities.builtin.provider.message import (
    LLMInvokeResult,
    LLMStreamEvent,
    Message,
    MessageChunk,
)
from langbot_plugin.api.entities.builtin.provider.reasoning import ReasoningLevel
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.proxies._knowledge_api import KnowledgeAPIMixin
from langbot_plugin.api.proxies.invocation import run_scoped
from langbot_plugin.protocol import host_api
from langbot_plugin.protocol.spec import Empty, Params

__all__ = ["LangBotAPIProxy", "run_scoped"]


class LangBotAPIProxy(KnowledgeAPIMixin):
    """Host APIs available to a whole plugin."""

    # ------------------------------------------------------------------ host and bots

    async def get_bots(self) -> list[str]:
        """The workspace's bots."""
        return (await self._send(host_api.messaging.GET_BOTS, host_api.common.CallerParams())).bots

    async def get_bot_info(self, bot_uuid: str) -> dict[str, Any]:
        """A bot's information."""
        params = host_api.messaging.BotRef(bot_uuid=bot_uuid)
        return (await self._send(host_api.messaging.GET_BOT_INFO, params)).bot

    @run_scoped
    async def send_message(
        self, bot_uuid: str, target_type: str, target_id: str, message_chain: MessageChain
    ) -> Any:
        """Send a chain through a bot; ``target_type`` is ``"person"`` or ``"group"``."""
        params = host_api.messaging.SendMessageParams(
            bot_uuid=bot_uuid,
            target_type=target_type,
            target_id=target_id,
            message_chain=message_chain,
        )
        return (await self._send(host_api.messaging.SEND_MESSAGE, params)).result

    @run_scoped
    async def call_platform_api(
        self, bot_uuid: str, action: str, params: dict[str, Any] | None = None
    ) -> Any:
        """Call an adapter API of a bot (``get_group_info``, ...)."""
        request = host_api.messaging.PlatformApiParams(
            bot_uuid=bot_uuid, action=action, params=dict(params or {})
        )
        return (await self._send(host_api.messaging.CALL_PLATFORM_API, request)).result

    # ------------------------------------------------------------------ Box
    # Inside a run these are the run's calls (``run_scoped``), held to its grants.

    @run_scoped
    async def get_box_status(self) -> BoxStatus:
        """Whether the host's Box is enabled and reachable, and the workspace's capacity."""
        return await self._send(host_api.box.GET_BOX_STATUS, host_api.common.RunScopedParams())

    @run_scoped
    async def list_boxes(self) -> list[BoxSession]:
        """The Boxes of the plugin's workspace."""
        return (await self._send(host_api.box.LIST_BOXES, host_api.common.RunScopedParams())).items

    @run_scoped
    async def acquire_box(
        self, reuse_key: str, options: dict[str, Any] | None = None
    ) -> BoxSession:
        """The workspace's Box for ``reuse_key``, created when missing (``options``:
        ``image`` only; binding one to a run is a run's call)."""
        params = host_api.box.AcquireBoxParams(reuse_key=reuse_key, options=dict(options or {}))
        return await self._send_waiting(host_api.box.ACQUIRE_BOX, params)

    # ------------------------------------------------------------------ models

    @run_scoped
    async def get_llm_models(self) -> list[str]:
        """The uuids of the workspace's LLM models."""
        params = host_api.common.RunScopedParams()
        return (await self._send(host_api.models.GET_LLM_MODELS, params)).llm_models

    @run_scoped
    async def invoke_llm(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        *,
        reasoning_level: ReasoningLevel | None = None,
    ) -> Message:
        """Ask a model for a complete answer (``reasoning_level``: how much it should
        reason, on a host that supports it)."""
        level = self._level_kwarg(reasoning_level)
        result = await self.invoke_llm_with_usage(
            llm_model_uuid, messages, funcs, extra_args, timeout=timeout, **level
        )
        return result.message

    @run_scoped
    async def invoke_llm_with_usage(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        *,
        reasoning_level: ReasoningLevel | None = None,
    ) -> LLMInvokeResult:
        """Like :meth:`invoke_llm`, with the provider's token usage when reported."""
        level = await self._reasoning(reasoning_level)
        limit = timeout if timeout is not None else host_api.models.INVOKE_LLM.default_wait
        params = self._llm_params(
            llm_model_uuid, messages, funcs, extra_args, timeout=limit, **level
        )
        return await self._invoke_llm(params, timeout=limit)

    @run_scoped
    async def invoke_llm_stream(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        *,
        reasoning_level: ReasoningLevel | None = None,
    ) -> AsyncGenerator[MessageChunk]:
        """Stream a model's answer as chunks (each carrying the new text)."""
        level = self._level_kwarg(reasoning_level)
        events = self.invoke_llm_stream_events(
            llm_model_uuid, messages, funcs, extra_args, timeout=timeout, **level
        )
        async with aclosing(events) as owned:
            async for event in owned:
                if event.chunk is not None:
                    yield event.chunk

    @run_scoped
    async def invoke_llm_stream_events(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        *,
        reasoning_level: ReasoningLevel | None = None,
    ) -> AsyncGenerator[LLMStreamEvent]:
        """Stream a model's answer as events: chunks and usage reports.

        ``timeout`` bounds the wait for each item (default 120 s); when given it is
        also sent to the host. Closing the stream (``aclose``) closes the host's.
        """
        level = await self._reasoning(reasoning_level)
        params = self._llm_params(
            llm_model_uuid, messages, funcs, extra_args, timeout=timeout, **level
        )
        async with aclosing(self._llm_events(params, timeout=timeout)) as owned:
            async for event in owned:
                yield event

    # ------------------------------------------------------------------ storage

    async def get_config_file(self, file_key: str) -> bytes:
        """A file uploaded through the plugin's config form."""
        params = host_api.storage.ConfigFileRef(file_key=file_key)
        return (await self._send(host_api.storage.GET_CONFIG_FILE, params)).content

    # ------------------------------------------------------------------ plugins and tools

    async def list_plugins_manifest(self) -> list[dict[str, Any]]:
        """The manifests of the installed plugins."""
        return await self._listing(host_api.messaging.LIST_PLUGINS_MANIFEST, Empty(), "plugins")

    async def list_commands(self) -> list[dict[str, Any]]:
        """The commands of all plugins."""
        return await self._listing(host_api.messaging.LIST_COMMANDS, Params(), "commands")

    @run_scoped
    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools the host offers (``author/plugin/tool`` names, schemas)."""
        return await self._listing(host_api.messaging.LIST_TOOLS, Params(), "tools")

    @run_scoped
    async def get_tool_detail(self, tool_name: str) -> dict[str, Any]:
        """One tool's name, description and parameter schema."""
        return dict(await self._tool_detail(tool_name))

    @run_scoped
    async def call_tool(
        self,
        tool_name: str,
        parameters: dict[str, Any],
        session: dict[str, Any] | None = None,
        query_id: int | None = None,
    ) -> Any:
        """Call a tool on behalf of a session and query; inside a run, as the run (the
        run supplies both, and its grants apply)."""
        if session is None or query_id is None:
            raise ValueError("session and query_id are required outside a Runner invocation")
        params = host_api.models.CallToolParams(
            tool_name=tool_name, tool_parameters=parameters, session=session, query_id=query_id
        )
        answer = await self._send_waiting(host_api.models.CALL_TOOL, params)
        # inside a run the call takes the run's form, answered with ``result``
        return answer.result if "result" in answer.model_fields_set else answer.tool_response
