"""A Page: an HTML page in LangBot's UI (``notes.html``) and the API it calls.

The page calls ``langbot.api(endpoint, body, method)``; LangBot passes each call to
:meth:`Notes.handle_api`, whose answer (``PageResponse.ok(data)`` or ``.fail(error)``)
goes back to the page. The notes live in the plugin's storage, so they outlive the
plugin process; at most ``max_notes`` (a plugin setting) are kept, the newest.

=================  =======  ==========================================
endpoint           method   what
=================  =======  ==========================================
``/notes``         GET      ``{"notes": [...]}``
``/notes``         POST     add ``{"text": ...}``; answers the notes
``/notes/clear``   POST     remove every note
=================  =======  ==========================================
"""

import json
from typing import Any

from langbot_plugin.api.definition.components.page import Page, PageRequest, PageResponse

NOTES_KEY = "notes"


class Notes(Page):
    async def _load(self) -> list[str]:
        if NOTES_KEY not in await self.plugin.get_plugin_storage_keys():
            return []
        return list(json.loads(await self.plugin.get_plugin_storage(NOTES_KEY)))

    async def _save(self, notes: list[str]) -> None:
        await self.plugin.set_plugin_storage(NOTES_KEY, json.dumps(notes).encode())

    async def handle_api(self, request: PageRequest) -> PageResponse:
        route = (request.method.upper(), request.endpoint)
        if route == ("GET", "/notes"):
            return PageResponse.ok({"notes": await self._load()})
        if route == ("POST", "/notes"):
            body: Any = request.body
            text = str(body.get("text", "")).strip() if isinstance(body, dict) else ""
            if not text:
                return PageResponse.fail("a note needs some text")
            limit = int(self.plugin.get_config().get("max_notes", 20))
            notes = [*await self._load(), text][-limit:]
            await self._save(notes)
            return PageResponse.ok({"notes": notes})
        if route == ("POST", "/notes/clear"):
            await self._save([])
            return PageResponse.ok({"notes": []})
        return PageResponse.fail(f"no endpoint {request.method} {request.endpoint}")
