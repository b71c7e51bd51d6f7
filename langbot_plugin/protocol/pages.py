"""What a plugin page's script asks its plugin, and the answer (``page_api``).

Apart from the other component calls so that the ``Page`` base class costs nothing to
import.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

__all__ = ["PageRequest", "PageResponse"]


class PageRequest(BaseModel):
    """What a page's script asked its plugin (``Page.handle_api`` receives it)."""

    endpoint: str
    method: str
    body: Any = None
    caller: dict[str, Any] | None = None
    headers: dict[str, str] = Field(default_factory=dict[str, str])


class PageResponse(BaseModel):
    """A page API's answer: ``data``, or an ``error`` message."""

    data: Any = None
    error: str | None = None

    @classmethod
    def ok(cls, data: Any = None) -> PageResponse:
        return cls(data=data)

    @classmethod
    def fail(cls, error: str) -> PageResponse:
        return cls(error=error)
