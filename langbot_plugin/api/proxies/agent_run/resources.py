"""Run-scoped access to models, tools, knowledge bases and storage."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Sequence
from contextlib import aclosing
from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.entities.builtin.agent_runner.resources import (
    KnowledgeBaseResource,
    ModelResource,
    ToolResource,
)
from langbot_plugin.api.entities.builtin.provider.message import (
    LLMInvokeResult,
    LLMStreamEvent,
    Message,
    MessageChunk,
)
from langbot_plugin.api.entities.builtin.provider.reasoning import ReasoningLevel
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase
from langbot_plugin.protocol.host_api import knowledge, models
from langbot_plugin.protocol.host_api.models import RerankResult, ToolDetail

__all__ = ["RUN_RETRIEVE_WAIT", "AgentRunResourceAPIMixin"]

#: How long a run waits for a retrieval (the reference's wait; the deadline cuts it).
RUN_RETRIEVE_WAIT = 30.0


class AgentRunResourceAPIMixin(AgentRunProxyBase):
    """Models, tools, knowledge bases, storage and the host version."""

    # ------------------------------------------------------------------ grants

    def get_allowed_models(self) -> list[ModelResource]:
        """The models granted to the run (a copy: the grants were frozen when the proxy
        was made, and changing what this returns or ``ctx.resources`` changes nothing)."""
        return [m.model_copy(deep=True) for m in self._resources.models]

    def get_allowed_tools(self) -> list[ToolResource]:
        """The tools granted to the run (a copy, see :meth:`get_allowed_models`)."""
        return [t.model_copy(deep=True) for t in self._resources.tools]

    def get_allowed_knowledge_bases(self) -> list[KnowledgeBaseResource]:
        """The knowledge bases granted to the run (a copy, see :meth:`get_allowed_models`)."""
        return [k.model_copy(deep=True) for k in self._resources.knowledge_bases]

    async def get_llm_models(self) -> list[str]:
        """The ids of the models granted to the run (answered locally, nothing is sent)."""
        return [model.model_id for model in self.get_allowed_models()]

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools the run may call (event, platform and plugin tools), from its
        grants: ``{name, description, parameters, type, operations}`` each."""
        listed: list[dict[str, Any]] = []
        for tool in self.get_allowed_tools():
            operations = self.granted_operations("tool", tool.tool_name)
            if "call" in operations:
                listed.append(
                    {
                        "name": tool.tool_name,
                        "description": tool.description,
                        "parameters": tool.parameters,
                        "type": tool.tool_type,
                        "operations": sorted(operations),
                    }
                )
        return listed

    async def list_knowledge_bases(self) -> list[dict[str, Any]]:
        """The knowledge bases the run may list: ``{uuid, name, type}`` each."""
        return [
            {"uuid": kb.kb_id, "name": kb.kb_name, "type": kb.kb_type}
            for kb in self.get_allowed_knowledge_bases()
            if "list" in self.granted_operations("knowledge_base", kb.kb_id)
        ]

    # ------------------------------------------------------------------ models

    async def count_tokens(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        *,
        reasoning_level: ReasoningLevel | None = None,
    ) -> int:
        """How many tokens ``messages`` (and ``funcs``) take for a model."""
        self._require(models.COUNT_TOKENS, llm_model_uuid)
        limit = self._timeout(models.COUNT_TOKENS.default_wait, timeout, models.COUNT_TOKENS.name)
        level = await self._reasoning(reasoning_level)
        params = self._llm_params(
            llm_model_uuid, messages, funcs, extra_args, timeout=limit, **level
        )
        return await self._count_tokens(params, timeout=limit)

    async def invoke_llm(  # noqa: PLR0917 -- reference signature
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        remove_think: bool | None = None,
        *,
        reasoning_level: ReasoningLevel | None = None,
    ) -> Message:
        """A model's complete answer (``reasoning_level``: how much it should reason, on
        a host that supports it)."""
        level = self._level_kwarg(reasoning_level)
        result = await self.invoke_llm_with_usage(
            llm_model_uuid, messages, funcs, extra_args, timeout, remove_think, **level
        )
        return result.message

    async def invoke_llm_with_usage(  # noqa: PLR0917 -- reference signature
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        remove_think: bool | None = None,
        *,
        reasoning_level: ReasoningLevel | None = None,
    ) -> LLMInvokeResult:
        """A model's complete answer with the provider's token usage when reported."""
        self._require(models.INVOKE_LLM, llm_model_uuid)
        limit = self._timeout(models.INVOKE_LLM.default_wait, timeout, models.INVOKE_LLM.name)
        level = await self._reasoning(reasoning_level)
        params = self._llm_params(
            llm_model_uuid,
            messages,
            funcs,
            extra_args,
            timeout=limit,
            remove_think=remove_think,
            **level,
        )
        return await self._invoke_llm(params, timeout=limit)

    async def invoke_llm_stream(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        remove_think: bool | None = None,
        *,
        timeout: float | None = None,
        reasoning_level: ReasoningLevel | None = None,
    ) -> AsyncGenerator[MessageChunk]:
        """A model's answer as incremental chunks (see ``CumulativeText`` for deltas)."""
        level = self._level_kwarg(reasoning_level)
        events = self.invoke_llm_stream_events(
            llm_model_uuid, messages, funcs, extra_args, remove_think, timeout=timeout, **level
        )
        async with aclosing(events) as owned:
            async for event in owned:
                if event.chunk is not None:
                    yield event.chunk

    async def invoke_llm_stream_events(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        remove_think: bool | None = None,
        *,
        timeout: float | None = None,
        reasoning_level: ReasoningLevel | None = None,
    ) -> AsyncGenerator[LLMStreamEvent]:
        """A model's answer as events (chunks and usage reports); ``timeout`` bounds
        each wait (default 120 s) and everything stops at the run's deadline."""
        self._require(models.INVOKE_LLM_STREAM, llm_model_uuid)
        per_item = self._timeout(
            models.INVOKE_LLM_STREAM.default_wait, timeout, models.INVOKE_LLM_STREAM.name
        )
        level = await self._reasoning(reasoning_level)
        params = self._llm_params(
            llm_model_uuid,
            messages,
            funcs,
            extra_args,
            timeout=per_item,
            remove_think=remove_think,
            **level,
        )
        async with aclosing(self._llm_events(params, timeout=per_item)) as owned:
            async for event in owned:
                yield event

    async def invoke_rerank(  # noqa: PLR0917 -- reference signature
        self,
        rerank_model_uuid: str,
        query: str,
        documents: list[str],
        top_k: int | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float = 30.0,
    ) -> list[RerankResult]:
        """Score ``documents`` against ``query`` with a rerank model."""
        self._require(models.INVOKE_RERANK, rerank_model_uuid)
        return await self._rerank(rerank_model_uuid, query, documents, top_k, extra_args, timeout)

    async def invoke_embedding(
        self, embedding_model_uuid: str, texts: list[str]
    ) -> list[list[float]]:
        """Embed ``texts`` with a model granted to the run for ``invoke``."""
        self._require(models.INVOKE_EMBEDDING, embedding_model_uuid)
        params = models.EmbeddingParams(embedding_model_uuid=embedding_model_uuid, texts=texts)
        return (await self._send(models.INVOKE_EMBEDDING, params)).vectors

    # ------------------------------------------------------------------ tools

    async def get_tool_detail(self, tool_name: str) -> ToolDetail:
        """A granted tool's name, description and parameter schema."""
        self._require(models.GET_TOOL_DETAIL, tool_name)
        return await self._tool_detail(tool_name)

    async def call_tool(self, tool_name: str, parameters: dict[str, Any]) -> Any:
        """Call a granted tool; returns the tool's result (any JSON value)."""
        self._require(models.CALL_TOOL, tool_name)
        params = models.CallToolParams(tool_name=tool_name, parameters=parameters)
        try:
            answer = await self._send(models.CALL_TOOL, params)
        except AgentAPIException as exc:
            if exc.code != "host.malformed_response":
                raise
            answer = None
        if answer is None or "result" not in answer.model_fields_set:
            # a run's call is answered with ``result``; name what is missing
            raise AgentAPIException.of(
                "host.malformed_response",
                f"{models.CALL_TOOL.name} answer lacks 'result'",
                details={"action": models.CALL_TOOL.name, "missing_key": "result"},
            )
        return answer.result

    # ------------------------------------------------------------------ knowledge

    async def retrieve_knowledge(
        self, kb_id: str, query_text: str, top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Retrieve from a granted knowledge base: ``[{id, content, metadata, distance,
        score?}, ...]``."""
        self._require(knowledge.RETRIEVE_KNOWLEDGE_BASE, kb_id)
        params = knowledge.RetrievalParams(
            kb_id=kb_id, query_text=query_text, top_k=top_k, filters=filters or {}
        )
        spec = knowledge.RETRIEVE_KNOWLEDGE_BASE
        return (await self._send(spec, params, timeout=RUN_RETRIEVE_WAIT)).results
