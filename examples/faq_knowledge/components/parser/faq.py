"""A Parser: LangBot hands it an uploaded file, it returns the text in sections.

A FAQ file is blocks separated by blank lines; a block starting ``Q:`` has its
question on that line and its answer after ``A:``. Each question becomes a section
(``heading`` the question, ``content`` the answer); any other block is a section
without a heading.
"""

from langbot_plugin.api.definition.components.parser.parser import Parser
from langbot_plugin.api.entities.builtin.rag.models import (
    ParseContext,
    ParseResult,
    TextSection,
)


def _section(block: str) -> TextSection:
    first, _, rest = block.partition("\n")
    if not first.upper().startswith("Q:"):
        return TextSection(content=block)
    answer = rest.strip()
    if answer.upper().startswith("A:"):
        answer = answer[2:].strip()
    return TextSection(content=answer, heading=first[2:].strip(), level=1)


class FaqParser(Parser):
    async def parse(self, context: ParseContext) -> ParseResult:
        text = context.file_content.decode("utf-8", errors="replace").replace("\r\n", "\n")
        blocks = [b.strip() for b in text.split("\n\n") if b.strip()]
        sections = [_section(b) for b in blocks]
        questions = sum(1 for s in sections if s.heading)
        metadata = {"filename": context.filename, "questions": questions}
        return ParseResult(text=text, sections=sections, metadata=metadata)
