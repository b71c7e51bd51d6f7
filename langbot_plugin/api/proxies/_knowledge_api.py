"""The knowledge side of the plugin-level API: embeddings, rerank, vector store,
knowledge bases and parsers (mixed into :class:`~.langbot_api.LangBotAPIProxy`)."""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.proxies._plugin_api import PluginAPIBase
from langbot_plugin.api.proxies.channel import take_pushed_file
from langbot_plugin.api.proxies.invocation import run_scoped
from langbot_plugin.protocol import host_api

__all__ = ["KnowledgeAPIMixin"]


class KnowledgeAPIMixin(PluginAPIBase):
    """Embeddings, rerank, vectors, knowledge bases, parsers."""

    @run_scoped
    async def invoke_embedding(
        self, embedding_model_uuid: str, texts: list[str]
    ) -> list[list[float]]:
        """Embed ``texts`` with a model."""
        params = host_api.models.EmbeddingParams(
            embedding_model_uuid=embedding_model_uuid, texts=texts
        )
        return (await self._send_waiting(host_api.models.INVOKE_EMBEDDING, params)).vectors

    @run_scoped
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
        scored = await self._rerank(rerank_model_uuid, query, documents, top_k, extra_args, timeout)
        return [dict(r) for r in scored]

    async def vector_upsert(
        self,
        collection_id: str,
        vectors: list[list[float]],
        ids: list[str],
        metadata: list[dict[str, Any]] | None = None,
        documents: list[str] | None = None,
    ) -> None:
        """Insert or replace vectors in a collection."""
        params = host_api.knowledge.VectorUpsertParams(
            collection_id=collection_id, vectors=vectors, ids=ids, metadata=metadata
        )
        if documents is not None:
            params.documents = documents
        await self._send_waiting(host_api.knowledge.VECTOR_UPSERT, params)

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
        params = host_api.knowledge.VectorSearchParams(
            collection_id=collection_id,
            query_vector=query_vector,
            top_k=top_k,
            filters=filters,
            search_type=search_type,
            query_text=query_text,
            vector_weight=vector_weight,
        )
        return (await self._send_waiting(host_api.knowledge.VECTOR_SEARCH, params)).results

    async def vector_delete(
        self,
        collection_id: str,
        file_ids: list[str] | None = None,
        filters: dict[str, Any] | None = None,
    ) -> int:
        """Delete vectors by file id or filter; returns how many went."""
        params = host_api.knowledge.VectorDeleteParams(
            collection_id=collection_id, file_ids=file_ids, filters=filters
        )
        return (await self._send_waiting(host_api.knowledge.VECTOR_DELETE, params)).count

    async def vector_list(
        self,
        collection_id: str,
        filters: dict[str, Any] | None = None,
        limit: int = 20,
        offset: int = 0,
    ) -> dict[str, Any]:
        """A page of a collection's vectors: ``{items, total}``."""
        params = host_api.knowledge.VectorListParams(
            collection_id=collection_id, filters=filters, limit=limit, offset=offset
        )
        return (await self._send_waiting(host_api.knowledge.VECTOR_LIST, params)).model_dump()

    async def get_knowledge_file_stream(self, storage_path: str) -> bytes:
        """The bytes of a stored knowledge file (the runtime pushes them first)."""
        params = host_api.knowledge.KnowledgeFileRef(storage_path=storage_path)
        answer = await self._send(host_api.knowledge.GET_KNOWLEDGE_FILE_STREAM, params)
        return await take_pushed_file(self._channel(), answer.file_key)

    @run_scoped
    async def list_knowledge_bases(self) -> list[dict[str, Any]]:
        """The workspace's knowledge bases: ``[{uuid, name, description}, ...]``."""
        return await self._listing(
            host_api.knowledge.LIST_KNOWLEDGE_BASES,
            host_api.common.CallerParams(),
            "knowledge_bases",
        )

    @run_scoped
    async def retrieve_knowledge(
        self, kb_id: str, query_text: str, top_k: int = 5, filters: dict[str, Any] | None = None
    ) -> list[dict[str, Any]]:
        """Retrieve from a knowledge base."""
        params = host_api.knowledge.RetrievalParams(
            kb_id=kb_id, query_text=query_text, top_k=top_k, filters=filters or {}
        )
        return (await self._send_waiting(host_api.knowledge.RETRIEVE_KNOWLEDGE, params)).results

    async def list_parsers(self, mime_type: str | None = None) -> list[dict[str, Any]]:
        """The document parsers, optionally only those accepting ``mime_type``."""
        return await self._listing(
            host_api.knowledge.LIST_PARSERS,
            host_api.knowledge.ParserFilter(mime_type=mime_type),
            "parsers",
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
        params = host_api.knowledge.ParserInvocation(
            plugin_author=plugin_author,
            plugin_name=plugin_name,
            storage_path=storage_path,
            mime_type=mime_type,
            filename=filename,
            metadata=dict(metadata or {}),
        )
        # the host's answer as it came (the reference adds no keys)
        spec = host_api.knowledge.INVOKE_PARSER
        return await self._send_raw(spec, params, timeout=spec.default_wait)
