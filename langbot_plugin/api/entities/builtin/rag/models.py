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


class FileMetadata(BaseModel):
    """What is known about an uploaded file."""

    model_config = ConfigDict(defer_build=True)

    filename: str
    file_size: int
    mime_type: str
    document_id: str
    knowledge_base_id: str
    upload_time: str | None = None
    extra: dict[str, Any] = Field(default_factory=dict)


class FileObject(BaseModel):
    """An uploaded file and where the host stores it."""

    model_config = ConfigDict(defer_build=True)

    metadata: FileMetadata
    storage_path: str


class TextChunk(BaseModel):
    """A piece of a document, possibly with its embedding."""

    model_config = ConfigDict(defer_build=True)

    text: str
    chunk_id: str
    document_id: str
    metadata: dict[str, Any] = Field(default_factory=dict)
    embedding: list[float] | None = None


class TextSection(BaseModel):
    """A structural section found by a parser (``level`` 0 = body)."""

    model_config = ConfigDict(defer_build=True)

    content: str
    heading: str | None = None
    level: int = 0
    page: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class ParseContext(BaseModel):
    """A file handed to a ``Parser``."""

    model_config = ConfigDict(defer_build=True)

    file_content: bytes
    mime_type: str
    filename: str
    metadata: dict[str, Any] = Field(default_factory=dict)


class ParseResult(BaseModel):
    """A parser's output: the full text and its sections."""

    model_config = ConfigDict(defer_build=True)

    text: str
    sections: list[TextSection] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class IngestionContext(BaseModel):
    """A document to ingest into a knowledge base."""

    model_config = ConfigDict(defer_build=True)

    file_object: FileObject
    knowledge_base_id: str
    collection_id: str | None = None
    creation_settings: dict[str, Any] = Field(default_factory=dict)
    parsed_content: ParseResult | None = None

    def get_collection_id(self) -> str:
        """The vector collection to use (the knowledge base id unless set)."""
        return self.collection_id or self.knowledge_base_id


class IngestionResult(BaseModel):
    """What ingesting a document produced."""

    model_config = ConfigDict(defer_build=True)

    document_id: str
    status: DocumentStatus
    chunks_created: int = 0
    error_message: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
