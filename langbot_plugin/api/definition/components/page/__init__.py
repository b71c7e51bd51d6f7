"""Pages: an HTML page shown in LangBot's UI, with an API the page can call."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from langbot_plugin.api.definition.components.base import BaseComponent

__all__ = ["Page", "PageRequest", "PageResponse"]


class PageRequest(BaseModel):
    endpoint: str
    method: str
    body: Any = None
    caller: dict[str, Any] | None = None
    headers: dict[str, str] = Field(default_factory=dict[str, str])


class PageResponse(BaseModel):
    data: Any = None
    error: str | None = None

    @classmethod
    def ok(cls, data: Any = None) -> PageResponse:
        return cls(data=data)

    @classmethod
    def fail(cls, error: str) -> PageResponse:
        return cls(error=error)


class Page(BaseComponent):
    """Override :meth:`handle_api` to answer the page's requests."""

    __kind__ = "Page"

    async def handle_api(self, request: PageRequest) -> PageResponse:
        return PageResponse.fail(f"{type(self).__name__} does not handle {request.endpoint}")
