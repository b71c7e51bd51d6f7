"""Enumerations of the RAG (knowledge engine) entities."""

from __future__ import annotations

from enum import Enum

__all__ = ["DocumentStatus", "SearchType"]


class DocumentStatus(str, Enum):  # noqa: UP042 -- str() as in the reference
    """Where a document is in ingestion."""

    PENDING = "pending"
    PROCESSING = "processing"
    COMPLETED = "completed"
    FAILED = "failed"
    DELETED = "deleted"


class SearchType(str, Enum):  # noqa: UP042 -- str() as in the reference
    """How a vector store search matches."""

    VECTOR = "vector"
    FULL_TEXT = "full_text"
    HYBRID = "hybrid"
