"""The parser and the engine together, the way a LangBot knowledge base uses them:
the host parses an upload, ingests the result, then retrieves for a query."""

from pathlib import Path

import pytest

from langbot_plugin.api.entities.builtin.rag.models import (
    FileMetadata,
    FileObject,
    IngestionContext,
    ParseResult,
)
from langbot_plugin.testing import PluginHarness

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio

FAQ = b"""Q: How do I install the plugin?
A: Upload the .lbpkg file on LangBot's plugin page.

Q: Which Python does it need?
A: Python 3.11 or newer.

Contact us in the forum for anything else.
"""


def document(parsed: ParseResult, document_id: str = "faq-1") -> IngestionContext:
    metadata = FileMetadata(
        filename="faq.md",
        file_size=len(FAQ),
        mime_type="text/markdown",
        document_id=document_id,
        knowledge_base_id="kb-1",
    )
    return IngestionContext(
        file_object=FileObject(metadata=metadata, storage_path="faq.md"),
        knowledge_base_id="kb-1",
        parsed_content=parsed,
    )


async def test_the_parser_makes_one_section_per_question() -> None:
    async with PluginHarness(PLUGIN) as h:
        parsed = await h.parse(FAQ, filename="faq.md", mime_type="text/markdown")
        assert [(s.heading, s.content) for s in parsed.sections] == [
            ("How do I install the plugin?", "Upload the .lbpkg file on LangBot's plugin page."),
            ("Which Python does it need?", "Python 3.11 or newer."),
            (None, "Contact us in the forum for anything else."),
        ]
        assert parsed.metadata["questions"] == 2


async def test_a_query_finds_the_best_answer_first() -> None:
    async with PluginHarness(PLUGIN) as h:
        parsed = await h.parse(FAQ, filename="faq.md")
        ingested = await h.ingest(document(parsed))
        assert ingested.chunks_created == 3
        found = await h.retrieve("which python version", knowledge_base_id="kb-1")
        best = found.results[0]
        assert best.metadata["question"] == "Which Python does it need?"
        assert best.content[0].text == "Python 3.11 or newer."
        top_one = await h.retrieve(
            "install python", knowledge_base_id="kb-1", retrieval_settings={"top_k": 1}
        )
        assert (len(top_one.results), top_one.total_found) == (1, 2)


async def test_a_deleted_document_is_not_found_again() -> None:
    async with PluginHarness(PLUGIN) as h:
        await h.ingest(document(await h.parse(FAQ)))
        assert await h.delete_document("kb-1", "faq-1")
        found = await h.retrieve("install", knowledge_base_id="kb-1")
        assert found.total_found == 0
        assert not await h.delete_document("kb-1", "faq-1")


async def test_an_unparsed_upload_is_refused() -> None:
    async with PluginHarness(PLUGIN) as h:
        result = await h.ingest(document(ParseResult(text="")))
        assert result.status.value == "failed"
        assert result.error_message is not None
        assert "faq parser" in result.error_message
