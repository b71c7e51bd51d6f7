"""Run-scoped access to models, tools, knowledge bases and storage."""

from __future__ import annotations

import base64
import binascii
from collections.abc import AsyncIterator, Sequence
from typing import Any, cast

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
from langbot_plugin.api.entities.builtin.resource.tool import LLMTool
from langbot_plugin.api.proxies._plugin_api import llm_payload
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase
from langbot_plugin.api.proxies.agent_run.types import RerankResult, ToolDetail

__all__ = ["AgentRunResourceAPIMixin"]


class AgentRunResourceAPIMixin(AgentRunProxyBase):
    """Models, tools, knowledge bases, storage and the host version."""

    # ------------------------------------------------------------------ grants

    def get_allowed_models(self) -> list[ModelResource]:
        """The models granted to the run."""
        return self.ctx.resources.models

    def get_allowed_tools(self) -> list[ToolResource]:
        """The tools granted to the run."""
        return self.ctx.resources.tools

    def get_allowed_knowledge_bases(self) -> list[KnowledgeBaseResource]:
        """The knowledge bases granted to the run."""
        return self.ctx.resources.knowledge_bases

    # ------------------------------------------------------------------ models

    def _llm_data(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None,
        extra_args: dict[str, Any] | None,
        remove_think: bool | None,
    ) -> dict[str, Any]:
        data = llm_payload(llm_model_uuid, messages, funcs, extra_args)
        if remove_think is not None:
            data["remove_think"] = remove_think
        return data

    async def count_tokens(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> int:
        """How many tokens ``messages`` (and ``funcs``) take for a model."""
        self._require_resource("model", llm_model_uuid, "count_tokens")
        limit = self._timeout(30.0, timeout)
        data = {**llm_payload(llm_model_uuid, messages, funcs, extra_args), "timeout": limit}
        answer = await self._call("count_tokens", data, timeout=limit)
        tokens = self._expect(answer, "tokens", "count_tokens")
        if isinstance(tokens, bool) or not isinstance(tokens, int) or tokens < 0:
            raise self._malformed("count_tokens", "tokens must be a non-negative integer")
        return tokens

    async def invoke_llm(  # noqa: PLR0917 -- reference signature
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float | None = None,
        remove_think: bool | None = None,
    ) -> Message:
        """A model's complete answer."""
        result = await self.invoke_llm_with_usage(
            llm_model_uuid, messages, funcs, extra_args, timeout, remove_think
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
    ) -> LLMInvokeResult:
        """A model's complete answer with the provider's token usage when reported."""
        self._require_resource("model", llm_model_uuid, "invoke")
        limit = self._timeout(120.0, timeout)
        data = self._llm_data(llm_model_uuid, messages, funcs, extra_args, remove_think)
        data["timeout"] = limit
        answer = await self._call("invoke_llm", data, timeout=limit)
        message = self._expect(answer, "message", "invoke_llm")
        body = {"message": message, "usage": answer.get("usage")}
        return self._model(LLMInvokeResult, body, "invoke_llm")

    async def invoke_llm_stream(
        self,
        llm_model_uuid: str,
        messages: Sequence[Message],
        funcs: Sequence[LLMTool] | None = None,
        extra_args: dict[str, Any] | None = None,
        remove_think: bool | None = None,
        *,
        timeout: float | None = None,
    ) -> AsyncIterator[MessageChunk]:
        """A model's answer as incremental chunks (see ``CumulativeText`` for deltas)."""
        async for event in self.invoke_llm_stream_events(
            llm_model_uuid, messages, funcs, extra_args, remove_think, timeout=timeout
        ):
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
    ) -> AsyncIterator[LLMStreamEvent]:
        """A model's answer as events (chunks and usage reports); ``timeout`` bounds
        each wait (default 120 s) and everything stops at the run's deadline."""
        self._require_resource("model", llm_model_uuid, "stream")
        per_item = self._timeout(120.0, timeout)
        data = self._llm_data(llm_model_uuid, messages, funcs, extra_args, remove_think)
        data["timeout"] = per_item
        async for item in self._stream("invoke_llm_stream", data, per_item_timeout=per_item):
            picked = {key: item[key] for key in ("chunk", "usage") if key in item}
            if not picked:
                raise self._malformed("invoke_llm_stream", "item has neither chunk nor usage")
            yield self._model(LLMStreamEvent, picked, "invoke_llm_stream")

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
        self._require_resource("model", rerank_model_uuid, "rerank")
        data = {
            "rerank_model_uuid": rerank_model_uuid,
            "query": query,
            "documents": documents,
            "top_k": top_k,
            "extra_args": dict(extra_args or {}),
        }
        answer = await self._call("invoke_rerank", data, default_timeout=30.0, timeout=timeout)
        return cast(list[RerankResult], self._list(answer, "results", "invoke_rerank"))

    def _list(self, answer: dict[str, Any], key: str, action: str) -> list[Any]:
        value = self._expect(answer, key, action)
        if not isinstance(value, list):
            raise self._malformed(action, f"{key} must be a list")
        return cast(list[Any], value)

    # ------------------------------------------------------------------ tools

    async def get_tool_detail(self, tool_name: str) -> ToolDetail:
        """A granted tool's name, description and parameter schema."""
        self._require_resource("tool", tool_name, "detail")
        answer = await self._call("get_tool_detail", {"tool_name": tool_name}, default_timeout=30.0)
        tool = self._expect(answer, "tool", "get_tool_detail")
        if not isinstance(tool, dict):
            raise self._malformed("get_tool_detail", "tool must be an object")
        return cast(ToolDetail, tool)

    async def call_tool(self, tool_name: str, parameters: dict[str, Any]) -> Any:
        """Call a granted tool; returns the tool's result (any JSON value)."""
        self._require_resource("tool", tool_name, "call")
        data = {"tool_name": tool_name, "parameters": parameters}
        answer = await self._call("call_tool", data, default_timeout=180.0)
        return self._expect(answer, "result", "call_tool")

    # ------------------------------------------------------------------ knowledge

    async def retrieve_knowledge(
        self, kb_id: str, query_text: str, top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Retrieve from a granted knowledge base: ``[{id, content, metadata, distance,
        score?}, ...]``."""
        self._require_resource("knowledge_base", kb_id, "retrieve")
        data = {"kb_id": kb_id, "query_text": query_text, "top_k": top_k, "filters": filters or {}}
        answer = await self._call("retrieve_knowledge_base", data, default_timeout=30.0)
        return self._list(answer, "results", "retrieve_knowledge_base")

    # ------------------------------------------------------------------ storage

    async def _set_storage(self, area: str, key: str, value: bytes) -> None:
        self._require_storage(area)
        encoded = base64.b64encode(value).decode("ascii")
        await self._call(f"set_{area}_storage", {"key": key, "value_base64": encoded})

    async def _get_storage(self, area: str, key: str) -> bytes:
        self._require_storage(area)
        action = f"get_{area}_storage"
        encoded = self._expect(await self._call(action, {"key": key}), "value_base64", action)
        try:
            return base64.b64decode(encoded, validate=True)
        except (binascii.Error, TypeError, ValueError) as exc:
            raise self._malformed(action, "value_base64 is not base64") from exc

    async def _storage_keys(self, area: str) -> list[str]:
        self._require_storage(area)
        action = f"get_{area}_storage_keys"
        return self._list(await self._call(action, {}), "keys", action)

    async def _delete_storage(self, area: str, key: str) -> None:
        self._require_storage(area)
        await self._call(f"delete_{area}_storage", {"key": key})

    async def set_plugin_storage(self, key: str, value: bytes) -> None:
        """Store bytes in the plugin's storage (needs the plugin-storage grant)."""
        await self._set_storage("plugin", key, value)

    async def get_plugin_storage(self, key: str) -> bytes:
        """Bytes from the plugin's storage."""
        return await self._get_storage("plugin", key)

    async def get_plugin_storage_keys(self) -> list[str]:
        """The plugin storage's keys."""
        return await self._storage_keys("plugin")

    async def delete_plugin_storage(self, key: str) -> None:
        """Delete a key of the plugin's storage."""
        await self._delete_storage("plugin", key)

    async def set_workspace_storage(self, key: str, value: bytes) -> None:
        """Store bytes in the workspace storage (needs the workspace-storage grant)."""
        await self._set_storage("workspace", key, value)

    async def get_workspace_storage(self, key: str) -> bytes:
        """Bytes from the workspace storage."""
        return await self._get_storage("workspace", key)

    async def get_workspace_storage_keys(self) -> list[str]:
        """The workspace storage's keys."""
        return await self._storage_keys("workspace")

    async def delete_workspace_storage(self, key: str) -> None:
        """Delete a key of the workspace storage."""
        await self._delete_storage("workspace", key)

    # ------------------------------------------------------------------ host

    async def get_langbot_version(self) -> str:
        """The host's LangBot version."""
        version = self._expect(
            await self._call("get_langbot_version", {}), "version", "get_langbot_version"
        )
        if not isinstance(version, str):
            raise self._malformed("get_langbot_version", "version must be a string")
        return version
