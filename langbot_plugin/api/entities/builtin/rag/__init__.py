"""Knowledge-engine (RAG) entities: documents, chunks, retrieval, errors."""

from langbot_plugin.api.entities.builtin.rag.context import (
    RetrievalContext,
    RetrievalResponse,
    RetrievalResultEntry,
)
from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus, SearchType
from langbot_plugin.api.entities.builtin.rag.errors import (
    ChunkingError,
    CollectionNotFoundError,
    EmbeddingError,
    FileServiceError,
    HostServiceError,
    IngestionError,
    ParsingError,
    RAGError,
    RetrievalError,
    VectorStoreError,
)
from langbot_plugin.api.entities.builtin.rag.models import (
    FileMetadata,
    FileObject,
    IngestionContext,
    IngestionResult,
    ParseContext,
    ParseResult,
    TextChunk,
    TextSection,
)

__all__ = [
    "ChunkingError",
    "CollectionNotFoundError",
    "DocumentStatus",
    "EmbeddingError",
    "FileMetadata",
    "FileObject",
    "FileServiceError",
    "HostServiceError",
    "IngestionContext",
    "IngestionError",
    "IngestionResult",
    "ParseContext",
    "ParseResult",
    "ParsingError",
    "RAGError",
    "RetrievalContext",
    "RetrievalError",
    "RetrievalResponse",
    "RetrievalResultEntry",
    "SearchType",
    "TextChunk",
    "TextSection",
    "VectorStoreError",
]
