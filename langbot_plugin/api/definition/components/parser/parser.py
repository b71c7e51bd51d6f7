"""Parsers: turn an uploaded document into text and sections."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING

from langbot_plugin.api.definition.components.base import BaseComponent
from langbot_plugin.api.entities._lazy import lazy_names

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.rag.models import ParseContext, ParseResult

__all__ = ["ParseContext", "ParseResult", "Parser"]

__getattr__ = lazy_names(
    __name__,
    {
        "langbot_plugin.api.entities.builtin.rag.models": "ParseContext ParseResult",
    },
)


class Parser(BaseComponent):
    """Implement :meth:`parse`; ``spec.supported_mime_types`` lists what it accepts."""

    __kind__ = "Parser"

    @abstractmethod
    async def parse(self, context: ParseContext) -> ParseResult: ...
