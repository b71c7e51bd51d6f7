"""Exceptions of knowledge engines and the host services they use.

Exception tree::

    RAGError
    ├── HostServiceError
    │   ├── EmbeddingError
    │   ├── VectorStoreError
    │   │   └── CollectionNotFoundError
    │   └── FileServiceError
    ├── IngestionError
    │   ├── ParsingError
    │   └── ChunkingError
    └── RetrievalError
"""

from __future__ import annotations

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


class RAGError(Exception):
    """Root of the RAG errors."""


class HostServiceError(RAGError):
    """A host service (embedding, vector store, file storage) failed."""

    def __init__(self, message: str, original_error: Exception | None = None) -> None:
        super().__init__(message)
        self.original_error = original_error


class EmbeddingError(HostServiceError):
    """Computing embeddings failed."""


class VectorStoreError(HostServiceError):
    """A vector store operation failed."""


class CollectionNotFoundError(VectorStoreError):
    """The collection does not exist or is not accessible."""

    def __init__(self, collection_id: str) -> None:
        super().__init__(f"Collection not found or not accessible: {collection_id}")
        self.collection_id = collection_id


class FileServiceError(HostServiceError):
    """Reading or writing a stored file failed."""


class IngestionError(RAGError):
    """Ingesting a document failed."""


class ParsingError(IngestionError):
    """Parsing a document failed."""

    def __init__(self, message: str, file_path: str | None = None) -> None:
        super().__init__(message)
        self.file_path = file_path


class ChunkingError(IngestionError):
    """Splitting a document into chunks failed."""


class RetrievalError(RAGError):
    """Retrieval failed."""
