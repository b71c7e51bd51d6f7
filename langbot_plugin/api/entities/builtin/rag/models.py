"""Documents, chunks and the ingestion / parsing contexts of knowledge engines."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus

__all__ = [
    "FileMetadata",
    "FileObject",
    "IngestionContext",
    "IngestionResult",
    "ParseContext",
    "ParseResult",
    "TextChunk",
    "TextSection",
]


class RagModel(BaseModel):
    """Base of the knowledge-engine models: each is built when first used."""

    model_config = ConfigDict(defer_build=True)


class FileMetadata(RagModel):
    """What is known about an uploaded file."""

    filename: str
    file_size: int
    mime_type: str
    document_id: str
    knowledge_base_id: str
    upload_time: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class FileObject(RagModel):
    """An uploaded file and where the host stores it."""

    metadata: FileMetadata
    storage_path: str


class TextChunk(RagModel):
    """A piece of a document, possibly with its embedding."""

    text: str
    chunk_id: str
    document_id: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    embedding: list[float] | None = None


class TextSection(RagModel):
    """A structural section found by a parser (``level`` 0 = body)."""

    content: str
    heading: str | None = None
    level: int = 0
    page: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ParseContext(RagModel):
    """A file handed to a ``Parser``."""

    file_content: bytes
    mime_type: str
    filename: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class ParseResult(RagModel):
    """A parser's output: the full text and its sections."""

    text: str
    sections: list[TextSection] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class IngestionContext(RagModel):
    """A document to ingest into a knowledge base."""

    file_object: FileObject
    knowledge_base_id: str
    collection_id: str | None = None
    creation_settings: dict[str, Any] = Field(default_factory=dict)
    parsed_content: ParseResult | None = None

    def get_collection_id(self) -> str:
        """The vector collection to use (the knowledge base id unless set)."""
        return self.collection_id or self.knowledge_base_id


class IngestionResult(RagModel):
    """What ingesting a document produced."""

    document_id: str
    status: DocumentStatus
    chunks_created: int = 0
    error_message: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
