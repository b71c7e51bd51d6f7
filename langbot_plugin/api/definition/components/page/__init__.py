"""Pages: an HTML page shown in LangBot's UI, with an API the page can call."""

from __future__ import annotations

from langbot_plugin.api.definition.components.base import BaseComponent
from langbot_plugin.protocol.pages import PageRequest, PageResponse

__all__ = ["Page", "PageRequest", "PageResponse"]


class Page(BaseComponent):
    """Override :meth:`handle_api` to answer the page's requests."""

    __kind__ = "Page"

    async def handle_api(self, request: PageRequest) -> PageResponse:
        """By default every request fails with ``Not implemented`` (the reference's words,
        which a page's tests compare with)."""
        return PageResponse.fail("Not implemented")
