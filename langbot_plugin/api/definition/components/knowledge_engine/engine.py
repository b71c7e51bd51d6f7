"""Knowledge engines: ingest documents into a knowledge base and retrieve from it."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from langbot_plugin.api.definition.components.base import BaseComponent
from langbot_plugin.api.entities._lazy import lazy_names

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.rag.context import (
        RetrievalContext,
        RetrievalResponse,
    )
    from langbot_plugin.api.entities.builtin.rag.models import IngestionContext, IngestionResult

__all__ = [
    "IngestionContext",
    "IngestionResult",
    "KnowledgeEngine",
    "KnowledgeEngineCapability",
    "RetrievalContext",
    "RetrievalResponse",
]

__getattr__ = lazy_names(
    __name__,
    {
        "langbot_plugin.api.entities.builtin.rag.context": "RetrievalContext RetrievalResponse",
        "langbot_plugin.api.entities.builtin.rag.models": "IngestionContext IngestionResult",
    },
)


class KnowledgeEngineCapability:
    """Capability names an engine can declare."""

    DOC_INGESTION = "doc_ingestion"
    DOC_PARSING = "doc_parsing"


class KnowledgeEngine(BaseComponent):
    """Implement ingest, delete and retrieve; knowledge-base hooks are optional."""

    __kind__ = "KnowledgeEngine"

    @classmethod
    def get_capabilities(cls) -> list[str]:
        return [KnowledgeEngineCapability.DOC_INGESTION]

    async def on_knowledge_base_create(self, kb_id: str, config: dict[str, Any]) -> None:
        """A knowledge base using this engine was created."""

    async def on_knowledge_base_delete(self, kb_id: str) -> None:
        """A knowledge base using this engine was deleted."""

    @abstractmethod
    async def ingest(self, context: IngestionContext) -> IngestionResult: ...

    @abstractmethod
    async def delete_document(self, kb_id: str, document_id: str) -> bool: ...

    @abstractmethod
    async def retrieve(self, context: RetrievalContext) -> RetrievalResponse: ...
