"""Plugin -> host actions of knowledge: the vector store, knowledge bases, stored
files and document parsers."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.rag.models import TextSection
from langbot_plugin.protocol.host_api.common import (
    CallerParams,
    QueryParams,
    RunScopedParams,
    to_host,
)
from langbot_plugin.protocol.spec import Result

__all__ = [
    "GET_KNOWLEDGE_FILE_STREAM",
    "INVOKE_PARSER",
    "LIST_KNOWLEDGE_BASES",
    "LIST_PARSERS",
    "LIST_PIPELINE_KNOWLEDGE_BASES",
    "RETRIEVE_KNOWLEDGE",
    "RETRIEVE_KNOWLEDGE_BASE",
    "VECTOR_DELETE",
    "VECTOR_LIST",
    "VECTOR_SEARCH",
    "VECTOR_UPSERT",
    "KnowledgeBases",
    "KnowledgeFile",
    "KnowledgeFileRef",
    "ParsedDocument",
    "ParserFilter",
    "ParserInvocation",
    "Parsers",
    "Retrieval",
    "RetrievalParams",
    "VectorCount",
    "VectorDeleteParams",
    "VectorListParams",
    "VectorPage",
    "VectorSearchParams",
    "VectorUpsertParams",
    "Vectors",
]


class VectorUpsertParams(CallerParams):
    collection_id: str
    vectors: list[list[float]]
    ids: list[str]
    metadata: list[dict[str, Any]] | None = None
    documents: list[str] | None = None


class VectorSearchParams(CallerParams):
    collection_id: str
    query_vector: list[float]
    top_k: int = 5
    filters: dict[str, Any] | None = None
    search_type: str = "vector"
    query_text: str = ""
    vector_weight: float | None = None


class Vectors(Result):
    """Search hits: ``[{id, distance, metadata, score?}, ...]``."""

    results: list[dict[str, Any]]


class VectorDeleteParams(CallerParams):
    collection_id: str
    file_ids: list[str] | None = None
    filters: dict[str, Any] | None = None


class VectorCount(Result):
    count: int


class VectorListParams(CallerParams):
    collection_id: str
    filters: dict[str, Any] | None = None
    limit: int = 20
    offset: int = 0


class VectorPage(Result):
    items: list[dict[str, Any]]
    total: int


class KnowledgeFileRef(CallerParams):
    storage_path: str


class KnowledgeFile(Result):
    """The key of the file the runtime pushed (``__file_chunk``) before answering."""

    file_key: str


class KnowledgeBases(Result):
    """``[{uuid, name, description, ...}, ...]``."""

    knowledge_bases: list[dict[str, Any]]


class RetrievalParams(QueryParams, RunScopedParams):
    """A query's or a run's retrieval (``query_id`` or ``run_id`` says which)."""

    kb_id: str
    query_text: str
    top_k: int = 5
    filters: dict[str, Any] = Field(default_factory=dict[str, Any])


class Retrieval(Result):
    """``[{id, content, metadata, distance, score?}, ...]``."""

    results: list[dict[str, Any]]


class ParserFilter(CallerParams):
    mime_type: str | None = None


class Parsers(Result):
    parsers: list[dict[str, Any]]


class ParserInvocation(CallerParams):
    plugin_author: str
    plugin_name: str
    storage_path: str
    mime_type: str
    filename: str
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


class ParsedDocument(Result):
    text: str
    sections: list[TextSection] = Field(default_factory=list[TextSection])
    metadata: dict[str, Any] = Field(default_factory=dict[str, Any])


VECTOR_UPSERT = to_host("vector_upsert", VectorUpsertParams, Result, timeout=60)
VECTOR_SEARCH = to_host("vector_search", VectorSearchParams, Vectors)
VECTOR_DELETE = to_host("vector_delete", VectorDeleteParams, VectorCount)
VECTOR_LIST = to_host("vector_list", VectorListParams, VectorPage)
GET_KNOWLEDGE_FILE_STREAM = to_host(
    "get_knowledge_file_stream", KnowledgeFileRef, KnowledgeFile, timeout=60, files=("file_key",)
)
LIST_KNOWLEDGE_BASES = to_host("list_knowledge_bases", CallerParams, KnowledgeBases)
LIST_PIPELINE_KNOWLEDGE_BASES = to_host(
    "list_pipeline_knowledge_bases", QueryParams, KnowledgeBases
)
RETRIEVE_KNOWLEDGE = to_host(
    "retrieve_knowledge", RetrievalParams, Retrieval, timeout=60, doc="a plugin's retrieval"
)
RETRIEVE_KNOWLEDGE_BASE = to_host(
    "retrieve_knowledge_base",
    RetrievalParams,
    Retrieval,
    timeout=60,
    doc="a query's or a run's retrieval from a knowledge base it may use",
)
LIST_PARSERS = to_host("list_parsers", ParserFilter, Parsers)
INVOKE_PARSER = to_host("invoke_parser", ParserInvocation, ParsedDocument, timeout=300)
