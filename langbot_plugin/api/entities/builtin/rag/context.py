"""Retrieval requests and answers of knowledge engines."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.provider.message import ContentElement
from langbot_plugin.api.entities.builtin.rag.models import RagModel

__all__ = ["RetrievalContext", "RetrievalResponse", "RetrievalResultEntry"]


class RetrievalResultEntry(RagModel):
    """One hit: its content, metadata and distance (lower is closer)."""

    id: str
    content: list[ContentElement]
    metadata: dict[str, Any]
    distance: float
    score: float | None = None


class RetrievalContext(RagModel):
    """A retrieval request."""

    query: str
    knowledge_base_id: str | None = None
    collection_id: str | None = None
    retrieval_settings: dict[str, Any] = Field(default_factory=dict)
    creation_settings: dict[str, Any] = Field(default_factory=dict)
    filters: dict[str, Any] = Field(default_factory=dict)

    def get_collection_id(self) -> str:
        """The vector collection to search (falls back to the knowledge base id)."""
        return self.collection_id or self.knowledge_base_id or ""


class RetrievalResponse(RagModel):
    """The hits of a retrieval."""

    results: list[RetrievalResultEntry]
    total_found: int
    metadata: dict[str, Any] = Field(default_factory=dict)
