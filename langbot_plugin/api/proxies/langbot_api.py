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
from langbot_plugin.api.proxies.channel import Channel
from langbot_plugin.rpc.errors import MalformedMessageError, NotReadyError

__all__ = ["LangBotAPIProxy", "stream_event"]

#: Default wait (seconds) of most calls, as in the reference.
DEFAULT_TIMEOUT = 15.0
LLM_TIMEOUT = 120.0


def _expect(answer: dict[str, Any], key: str, action: str) -> Any:
    if key not in answer:
        raise MalformedMessageError(
            f"{action} answer lacks {key!r}", details={"action": action, "missing_key": key}
        )
    return answer[key]


def stream_event(item: dict[str, Any], action: str) -> LLMStreamEvent:
    """One ``invoke_llm_stream`` item (``chunk`` and/or ``usage``) as an event."""
    picked = {key: item[key] for key in ("chunk", "usage") if key in item}
    if not picked:
        raise MalformedMessageError(
            f"{action} item has neither 'chunk' nor 'usage'", details={"action": action}
        )
    return LLMStreamEvent.model_validate(picked)


def llm_payload(
    llm_model_uuid: str,
    messages: Sequence[Message],
    funcs: Sequence[LLMTool] | None,
    extra_args: dict[str, Any] | None,
) -> dict[str, Any]:
    """The common part of the LLM actions' payloads."""
    return {
        "llm_model_uuid": llm_model_uuid,
        "messages": [m.model_dump(mode="json") for m in messages],
        "funcs": [f.model_dump(mode="json") for f in funcs or ()],
        "extra_args": dict(extra_args or {}),
    }


class LangBotAPIProxy:
    """Host APIs available to a whole plugin."""

    #: The connection to the runtime; set by the worker (possibly after construction).
    plugin_runtime_handler: Channel | None = None

    def __init__(self, plugin_runtime_handler: Channel | None = None) -> None:
        self.plugin_runtime_handler = plugin_runtime_handler

    def _channel(self) -> Channel:
        channel = self.plugin_runtime_handler
        if channel is None:
            raise NotReadyError("the plugin is not connected to a runtime yet")
        return channel

    async def _call(
        self, action: str, data: dict[str, Any], timeout: float = DEFAULT_TIMEOUT
    ) -> dict[str, Any]:
        return await self._channel().call(action, data, timeout=timeout)

    # ------------------------------------------------------------------ host and bots

    async def get_langbot_version(self) -> str:
        """The host's LangBot version."""
        return _expect(
            await self._call("get_langbot_version", {}), "version", "get_langbot_version"
        )

    async def get_bots(self) -> list[str]:
        """The uuids of the workspace's bots."""
        return _expect(await self._call("get_bots", {}), "bots", "get_bots")

    async def get_bot_info(self, bot_uuid: str) -> dict[str, Any]:
        """A bot's information."""
        return _expect(
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
        return _expect(await self._call("call_platform_api", data), "result", "call_platform_api")

    # ------------------------------------------------------------------ models

    async def get_llm_models(self) -> list[str]:
        """The uuids of the workspace's LLM models."""
        return _expect(await self._call("get_llm_models", {}), "llm_models", "get_llm_models")

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
        message = _expect(answer, "message", "invoke_llm")
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

    async def invoke_embedding(
        self, embedding_model_uuid: str, texts: list[str]
    ) -> list[list[float]]:
        """Embed ``texts`` with a model."""
        data = {"embedding_model_uuid": embedding_model_uuid, "texts": texts}
        return _expect(
            await self._call("invoke_embedding", data, 60), "vectors", "invoke_embedding"
        )

    async def invoke_rerank(  # noqa: PLR0917 -- reference signature
        self,
        rerank_model_uuid: str,
        query: str,
        documents: list[str],
        top_k: int | None = None,
        extra_args: dict[str, Any] | None = None,
        timeout: float = 60.0,
    ) -> list[dict[str, Any]]:
        """Score ``documents`` against ``query``: ``[{index, relevance_score}, ...]``."""
        data = {
            "rerank_model_uuid": rerank_model_uuid,
            "query": query,
            "documents": documents,
            "top_k": top_k,
            "extra_args": dict(extra_args or {}),
        }
        return _expect(await self._call("invoke_rerank", data, timeout), "results", "invoke_rerank")

    # ------------------------------------------------------------------ storage

    async def set_plugin_storage(self, key: str, value: bytes) -> None:
        """Store bytes under ``key`` in this plugin's storage."""
        await self._call("set_plugin_storage", {"key": key, "value_base64": _b64(value)})

    async def get_plugin_storage(self, key: str) -> bytes:
        """Bytes stored under ``key`` in this plugin's storage."""
        answer = await self._call("get_plugin_storage", {"key": key})
        return base64.b64decode(_expect(answer, "value_base64", "get_plugin_storage"))

    async def get_plugin_storage_keys(self) -> list[str]:
        """The keys of this plugin's storage."""
        answer = await self._call("get_plugin_storage_keys", {})
        return _expect(answer, "keys", "get_plugin_storage_keys")

    async def delete_plugin_storage(self, key: str) -> None:
        """Delete ``key`` from this plugin's storage."""
        await self._call("delete_plugin_storage", {"key": key})

    async def set_workspace_storage(self, key: str, value: bytes) -> None:
        """Store bytes under ``key`` in the workspace storage shared by plugins."""
        await self._call("set_workspace_storage", {"key": key, "value_base64": _b64(value)})

    async def get_workspace_storage(self, key: str) -> bytes:
        """Bytes stored under ``key`` in the workspace storage."""
        answer = await self._call("get_workspace_storage", {"key": key})
        return base64.b64decode(_expect(answer, "value_base64", "get_workspace_storage"))

    async def get_workspace_storage_keys(self) -> list[str]:
        """The keys of the workspace storage."""
        answer = await self._call("get_workspace_storage_keys", {})
        return _expect(answer, "keys", "get_workspace_storage_keys")

    async def delete_workspace_storage(self, key: str) -> None:
        """Delete ``key`` from the workspace storage."""
        await self._call("delete_workspace_storage", {"key": key})

    async def get_config_file(self, file_key: str) -> bytes:
        """A file uploaded through the plugin's config form."""
        answer = await self._call("get_config_file", {"file_key": file_key})
        return base64.b64decode(_expect(answer, "file_base64", "get_config_file"))

    # ------------------------------------------------------------------ plugins and tools

    async def list_plugins_manifest(self) -> list[dict[str, Any]]:
        """The manifests of the installed plugins."""
        return _expect(
            await self._call("list_plugins_manifest", {}), "plugins", "list_plugins_manifest"
        )

    async def list_commands(self) -> list[dict[str, Any]]:
        """The commands of all plugins."""
        return _expect(await self._call("list_commands", {}), "commands", "list_commands")

    async def list_tools(self) -> list[dict[str, Any]]:
        """The tools the host offers (``author/plugin/tool`` names, schemas)."""
        return _expect(await self._call("list_tools", {}), "tools", "list_tools")

    async def get_tool_detail(self, tool_name: str) -> dict[str, Any]:
        """One tool's name, description and parameter schema."""
        answer = await self._call("get_tool_detail", {"tool_name": tool_name})
        return _expect(answer, "tool", "get_tool_detail")

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
        return _expect(await self._call("call_tool", data, 180), "tool_response", "call_tool")

    # ------------------------------------------------------------------ knowledge

    async def vector_upsert(
        self,
        collection_id: str,
        vectors: list[list[float]],
        ids: list[str],
        metadata: list[dict[str, Any]] | None = None,
        documents: list[str] | None = None,
    ) -> None:
        """Insert or replace vectors in a collection."""
        data: dict[str, Any] = {
            "collection_id": collection_id,
            "vectors": vectors,
            "ids": ids,
            "metadata": metadata,
        }
        if documents is not None:
            data["documents"] = documents
        await self._call("vector_upsert", data, 60)

    async def vector_search(  # noqa: PLR0917 -- reference signature
        self,
        collection_id: str,
        query_vector: list[float],
        top_k: int = 5,
        filters: dict[str, Any] | None = None,
        search_type: str = "vector",
        query_text: str = "",
        vector_weight: float | None = None,
    ) -> list[dict[str, Any]]:
        """Search a collection: ``[{id, distance, metadata, score?}, ...]``."""
        data = {
            "collection_id": collection_id,
            "query_vector": query_vector,
            "top_k": top_k,
            "filters": filters,
            "search_type": search_type,
            "query_text": query_text,
            "vector_weight": vector_weight,
        }
        return _expect(await self._call("vector_search", data, 30), "results", "vector_search")

    async def vector_delete(
        self,
        collection_id: str,
        file_ids: list[str] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> int:
        """Delete vectors by file id or filter; returns how many went."""
        data = {"collection_id": collection_id, "file_ids": file_ids, "filters": filters}
        return _expect(await self._call("vector_delete", data, 30), "count", "vector_delete")

    async def vector_list(
        self,
        collection_id: str,
        filters: dict[str, Any] | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> dict[str, Any]:
        """A page of a collection's vectors: ``{items, total}``."""
        data = {
            "collection_id": collection_id,
            "filters": filters,
            "limit": limit,
            "offset": offset,
        }
        return await self._call("vector_list", data, 30)

    async def get_knowledge_file_stream(self, storage_path: str) -> bytes:
        """The bytes of a stored knowledge file (the runtime pushes them first)."""
        answer = await self._call("get_knowledge_file_stream", {"storage_path": storage_path})
        key = _expect(answer, "file_key", "get_knowledge_file_stream")
        return self._channel().files.take(key)

    async def list_knowledge_bases(self) -> list[dict[str, Any]]:
        """The workspace's knowledge bases: ``[{uuid, name, description}, ...]``."""
        answer = await self._call("list_knowledge_bases", {})
        return _expect(answer, "knowledge_bases", "list_knowledge_bases")

    async def retrieve_knowledge(
        self, kb_id: str, query_text: str, top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Retrieve from a knowledge base."""
        data = {"kb_id": kb_id, "query_text": query_text, "top_k": top_k, "filters": filters or {}}
        return _expect(
            await self._call("retrieve_knowledge", data, 30), "results", "retrieve_knowledge"
        )

    async def list_parsers(self, mime_type: str | None = None) -> list[dict[str, Any]]:
        """The document parsers, optionally only those accepting ``mime_type``."""
        return _expect(
            await self._call("list_parsers", {"mime_type": mime_type}), "parsers", "list_parsers"
        )

    async def invoke_parser(  # noqa: PLR0917 -- reference signature
        self,
        plugin_author: str,
        plugin_name: str,
        storage_path: str,
        mime_type: str,
        filename: str,
        metadata: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """Parse a stored file with another plugin's parser: ``{text, sections, metadata}``."""
        data = {
            "plugin_author": plugin_author,
            "plugin_name": plugin_name,
            "storage_path": storage_path,
            "mime_type": mime_type,
            "filename": filename,
            "metadata": dict(metadata or {}),
        }
        return await self._call("invoke_parser", data, 300)


def _b64(value: bytes) -> str:
    return base64.b64encode(value).decode("ascii")
