"""Tools: functions the LLM can call."""

from __future__ import annotations

from abc import abstractmethod
from typing import TYPE_CHECKING, Any

from langbot_plugin.api.definition.components.base import BaseComponent

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.provider.session import Session

__all__ = ["Tool"]


class Tool(BaseComponent):
    """Implement :meth:`call`; its parameters are described by ``spec.parameters``.

    ``call`` may take just ``params`` or ``(params, session, query_id)`` (plus
    ``query_uuid`` if declared); the worker passes what the signature asks for. The
    return value must be JSON-serialisable; it becomes the tool result the LLM sees.
    """

    __kind__ = "Tool"

    @abstractmethod
    async def call(self, params: dict[str, Any], session: Session, query_id: int) -> Any:
        """Run the tool."""
