from langbot_plugin.api.definition.components.knowledge_engine.engine import (
    KnowledgeEngine,
    KnowledgeEngineCapability,
)
from langbot_plugin.api.entities.builtin.provider.message import ContentElement
from langbot_plugin.api.entities.builtin.rag.context import (
    RetrievalContext,
    RetrievalResponse,
    RetrievalResultEntry,
)
from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus
from langbot_plugin.api.entities.builtin.rag.models import IngestionContext, IngestionResult


class Notes(KnowledgeEngine):
    @classmethod
    def get_capabilities(cls) -> list[str]:
        return [KnowledgeEngineCapability.DOC_INGESTION]

    async def ingest(self, context: IngestionContext) -> IngestionResult:
        return IngestionResult(
            document_id=context.file_object.metadata.document_id,
            status=DocumentStatus.COMPLETED,
            chunks_created=1,
        )

    async def delete_document(self, kb_id: str, document_id: str) -> bool:
        return True

    async def retrieve(self, context: RetrievalContext) -> RetrievalResponse:
        entry = RetrievalResultEntry(
            id="n1",
            content=[ContentElement.from_text(f"笔记: {context.query}")],
            metadata={"kb": context.knowledge_base_id},
            distance=0.25,
        )
        return RetrievalResponse(results=[entry], total_found=1)
