"""A KnowledgeEngine: LangBot gives it parsed documents and asks it for passages.

``ingest`` keeps each question of a parsed FAQ (the sections the ``faq`` parser
made) with its answer; ``retrieve`` ranks the entries by the share of the query's
words found in the question and answer, best first, at most ``top_k`` of them.
Everything lives in memory; a real engine would keep an index in a database.
"""

import re
from dataclasses import dataclass

from langbot_plugin.api.definition.components.knowledge_engine.engine import KnowledgeEngine
from langbot_plugin.api.entities.builtin.provider.message import ContentElement
from langbot_plugin.api.entities.builtin.rag.context import (
    RetrievalContext,
    RetrievalResponse,
    RetrievalResultEntry,
)
from langbot_plugin.api.entities.builtin.rag.enums import DocumentStatus
from langbot_plugin.api.entities.builtin.rag.models import IngestionContext, IngestionResult

WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(WORD.findall(text.lower()))


@dataclass(frozen=True)
class Entry:
    question: str
    answer: str

    def score(self, query: set[str]) -> float:
        return len(query & words(f"{self.question} {self.answer}")) / len(query)


class FaqIndex(KnowledgeEngine):
    def __init__(self) -> None:
        super().__init__()
        # collection id -> document id -> entries
        self.entries: dict[str, dict[str, list[Entry]]] = {}

    async def ingest(self, context: IngestionContext) -> IngestionResult:
        document_id = context.file_object.metadata.document_id
        parsed = context.parsed_content
        if parsed is None or not parsed.sections:
            return IngestionResult(
                document_id=document_id,
                status=DocumentStatus.FAILED,
                error_message="nothing to index: parse the file with the faq parser first",
            )
        found = [Entry(s.heading or "", s.content) for s in parsed.sections]
        self.entries.setdefault(context.get_collection_id(), {})[document_id] = found
        return IngestionResult(
            document_id=document_id, status=DocumentStatus.COMPLETED, chunks_created=len(found)
        )

    async def delete_document(self, kb_id: str, document_id: str) -> bool:
        return self.entries.get(kb_id, {}).pop(document_id, None) is not None

    async def retrieve(self, context: RetrievalContext) -> RetrievalResponse:
        query = words(context.query)
        top_k = int(context.retrieval_settings.get("top_k", 3))
        hits: list[tuple[float, RetrievalResultEntry]] = []
        for document_id, entries in self.entries.get(context.get_collection_id(), {}).items():
            for index, entry in enumerate(entries):
                score = entry.score(query) if query else 0.0
                if score > 0:
                    hit = RetrievalResultEntry(
                        id=f"{document_id}:{index}",
                        content=[ContentElement.from_text(entry.answer)],
                        metadata={"document_id": document_id, "question": entry.question},
                        distance=1.0 - score,
                    )
                    hits.append((score, hit))
        hits.sort(key=lambda pair: -pair[0])
        return RetrievalResponse(results=[h for _, h in hits[:top_k]], total_found=len(hits))
