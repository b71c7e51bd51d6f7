from langbot_plugin.api.definition.components.parser.parser import Parser
from langbot_plugin.api.entities.builtin.rag.models import ParseContext, ParseResult


class Splitter(Parser):
    async def parse(self, context: ParseContext) -> ParseResult:
        lines = context.file_content.decode().splitlines()
        return ParseResult(text=" | ".join(lines), metadata={"lines": len(lines)})
