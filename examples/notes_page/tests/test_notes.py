"""The page's API, called as LangBot relays the page's ``langbot.api(...)`` calls."""

from pathlib import Path

import pytest

from langbot_plugin.testing import PluginHarness

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio


async def test_notes_are_added_listed_and_cleared() -> None:
    async with PluginHarness(PLUGIN) as h:
        assert (await h.page("notes", "/notes")).data == {"notes": []}
        await h.page("notes", "/notes", method="POST", body={"text": "restart at 9"})
        added = await h.page("notes", "/notes", method="POST", body={"text": "new model"})
        assert added.data == {"notes": ["restart at 9", "new model"]}
        assert (await h.page("notes", "/notes")).data == added.data
        assert h.storage == {"notes": b'["restart at 9", "new model"]'}
        await h.page("notes", "/notes/clear", method="POST")
        assert (await h.page("notes", "/notes")).data == {"notes": []}


async def test_only_the_newest_notes_are_kept() -> None:
    async with PluginHarness(PLUGIN, config={"max_notes": 2}) as h:
        for text in ("one", "two", "three"):
            answer = await h.page("notes", "/notes", method="POST", body={"text": text})
        assert answer.data == {"notes": ["two", "three"]}


async def test_bad_requests_get_an_error() -> None:
    async with PluginHarness(PLUGIN) as h:
        empty = await h.page("notes", "/notes", method="POST", body={"text": "  "})
        assert empty.error == "a note needs some text"
        unknown = await h.page("notes", "/nope")
        assert unknown.error == "no endpoint GET /nope"
        missing = await h.page("nope", "/notes")
        assert missing.error == "page 'nope' not found"
