"""Static files shipped with the package.

``langbot-page-sdk.js`` is the script a plugin's Page loads (``window.langbot``: the
theme and language LangBot shows, translations, and ``langbot.api`` to call the
plugin's ``Page.handle_api``). LangBot looks for it next to this module and serves it at
:data:`PAGE_SDK_ROUTE`; ``lbp dev --web`` serves it there too.
"""

from __future__ import annotations

from importlib import resources

__all__ = ["PAGE_SDK_FILE", "PAGE_SDK_ROUTE", "page_sdk_script"]

#: The file name, next to this module (where LangBot 4.11 reads it).
PAGE_SDK_FILE = "langbot-page-sdk.js"
#: Where LangBot serves it to pages.
PAGE_SDK_ROUTE = "/api/v1/plugins/_sdk/page-sdk.js"


def page_sdk_script() -> bytes:
    """The page SDK's JavaScript."""
    return resources.files(__name__).joinpath(PAGE_SDK_FILE).read_bytes()
