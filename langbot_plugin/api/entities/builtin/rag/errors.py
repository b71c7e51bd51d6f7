"""Exceptions of knowledge engines and the host services they use.

The ``RAGError`` branch of the plugin API's one tree (drawn with its codes in
:mod:`langbot_plugin.api.errors` and ``docs/errors.md``): each is an
:class:`~langbot_plugin.rpc.errors.RPCError` with a stable code, so an engine's failure
reaches the host as its class.
"""

from __future__ import annotations

from typing import Any, Self

from langbot_plugin.rpc.errors import RPCError

__all__ = [
    "ChunkingError",
    "CollectionNotFoundError",
    "EmbeddingError",
    "FileServiceError",
    "HostServiceError",
    "IngestionError",
    "ParsingError",
    "RAGError",
    "RetrievalError",
    "VectorStoreError",
]


class RAGError(RPCError):
    """Root of the RAG errors."""

    code = "rag_error"


class HostServiceError(RAGError):
    """A host service (embedding, vector store, file storage) failed."""

    code = "rag_host_service_error"

    def __init__(
        self,
        message: str,
        original_error: Exception | None = None,
        *,
        details: dict[str, Any] | None = None,
        code: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(message, details=details, code=code, retryable=retryable)
        self.original_error = original_error


class EmbeddingError(HostServiceError):
    """Computing embeddings failed."""

    code = "rag_embedding_error"


class VectorStoreError(HostServiceError):
    """A vector store operation failed."""

    code = "rag_vector_store_error"


class CollectionNotFoundError(VectorStoreError):
    """The collection does not exist or is not accessible."""

    code = "rag_collection_not_found"

    def __init__(self, collection_id: str) -> None:
        super().__init__(
            f"Collection not found or not accessible: {collection_id}",
            details={"collection_id": collection_id},
        )
        self.collection_id = collection_id

    @classmethod
    def from_wire(
        cls, message: str, *, code: str, details: dict[str, Any] | None, retryable: bool
    ) -> Self:
        return cls(str((details or {}).get("collection_id", message)))


class FileServiceError(HostServiceError):
    """Reading or writing a stored file failed."""

    code = "rag_file_service_error"


class IngestionError(RAGError):
    """Ingesting a document failed."""

    code = "rag_ingestion_error"


class ParsingError(IngestionError):
    """Parsing a document failed."""

    code = "rag_parsing_error"

    def __init__(
        self,
        message: str,
        file_path: str | None = None,
        *,
        details: dict[str, Any] | None = None,
        code: str | None = None,
        retryable: bool | None = None,
    ) -> None:
        if file_path is not None:
            details = {**(details or {}), "file_path": file_path}
        super().__init__(message, details=details, code=code, retryable=retryable)
        path = self.details.get("file_path")
        self.file_path: str | None = path if isinstance(path, str) else None


class ChunkingError(IngestionError):
    """Splitting a document into chunks failed."""

    code = "rag_chunking_error"


class RetrievalError(RAGError):
    """Retrieval failed."""

    code = "rag_retrieval_error"
