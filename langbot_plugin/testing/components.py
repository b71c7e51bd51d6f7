"""The host's calls to a plugin's pages, parsers and knowledge engines, for the harness."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext, RetrievalResponse
from langbot_plugin.api.entities.builtin.rag.models import (
    IngestionContext,
    IngestionResult,
    ParseResult,
)
from langbot_plugin.host import PluginRuntimeClient
from langbot_plugin.protocol import component_calls as calls
from langbot_plugin.protocol.pages import PageResponse
from langbot_plugin.protocol.scope import ActionScope

__all__ = ["ComponentCalls"]


class ComponentCalls:
    """``page``, ``parse``, ``ingest``, ``retrieve``, ``delete_document``: what LangBot's
    UI and knowledge bases ask of a plugin. A subclass says where calls go."""

    def _target(self) -> tuple[PluginRuntimeClient, ActionScope | None, str, str]:
        raise NotImplementedError

    async def _call(self, spec: Any, params: Mapping[str, Any]) -> Any:
        client, scope, author, name = self._target()
        return await client.call_component(spec, author, name, params, scope=scope)

    async def page(
        self, page_id: str, endpoint: str, *, method: str = "GET", body: Any = None
    ) -> PageResponse:
        """What the page ``page_id`` answers when its HTML calls ``endpoint``."""
        params = {"page_id": page_id, "endpoint": endpoint, "method": method, "body": body}
        return await self._call(calls.PAGE_API, params)

    async def parse(
        self,
        content: bytes,
        *,
        filename: str = "document.txt",
        mime_type: str = "text/plain",
        parser: str | None = None,
    ) -> ParseResult:
        """Hand a document to the plugin's parser (the first, or ``parser``)."""
        client, scope, _, _ = self._target()
        context = (scope or client.bridge).as_context()
        suffix = filename.rsplit(".", 1)[-1][:16] if "." in filename else ""
        key = await client.session.send_file(content, suffix=suffix, context=context)
        request = {"file_key": key, "mime_type": mime_type, "filename": filename}
        return await self._call(calls.PARSE_DOCUMENT, {"parser_name": parser, "context": request})

    async def ingest(
        self, context: IngestionContext | Mapping[str, Any], *, engine: str | None = None
    ) -> IngestionResult:
        """Ingest a document into the plugin's knowledge engine."""
        data = context.model_dump(mode="json") if isinstance(context, IngestionContext) else context
        return await self._call(
            calls.RAG_INGEST_DOCUMENT, {"engine_name": engine, "context": dict(data)}
        )

    async def retrieve(
        self, query: str, *, knowledge_base_id: str = "kb", engine: str | None = None, **extra: Any
    ) -> RetrievalResponse:
        """Ask the plugin's knowledge engine for entries matching ``query``."""
        context = RetrievalContext(query=query, knowledge_base_id=knowledge_base_id, **extra)
        return await self._call(
            calls.RETRIEVE_KNOWLEDGE,
            {"retriever_name": engine, "retrieval_context": context.model_dump(mode="json")},
        )

    async def delete_document(
        self, knowledge_base_id: str, document_id: str, *, engine: str | None = None
    ) -> bool:
        result = await self._call(
            calls.RAG_DELETE_DOCUMENT,
            {"engine_name": engine, "kb_id": knowledge_base_id, "document_id": document_id},
        )
        return bool(result.success)
