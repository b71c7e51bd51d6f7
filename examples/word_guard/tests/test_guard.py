"""The guard, driven by the harness as LangBot would emit the events."""

from pathlib import Path

import pytest

from langbot_plugin.testing import PluginHarness, message_received

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio


async def test_ping_gets_pong_and_langbot_does_not_answer() -> None:
    async with PluginHarness(PLUGIN) as h:
        emitted = await h.emit_event(message_received("ping"))
        assert emitted.emitted
        assert emitted.reply_texts == ["pong"]
        assert emitted.context.is_prevented_default()
        assert not emitted.context.is_prevented_postorder()


async def test_a_blocked_word_is_held_back_and_counted() -> None:
    async with PluginHarness(PLUGIN) as h:
        for text in ("buy SPAM now", "more spam", "hello"):
            await h.emit_event(message_received(text, group=True))
        assert [m.text for m in h.sent] == ["Please keep it friendly."] * 2
        assert h.storage == {"held_back": b"2"}


async def test_the_blocked_words_come_from_the_settings() -> None:
    async with PluginHarness(PLUGIN, config={"blocked_words": ["durian"]}) as h:
        passed = await h.emit_event(message_received("spam is fine here"))
        held = await h.emit_event(message_received("I brought durian"))
        assert not passed.context.is_prevented_default()
        assert held.context.is_prevented_postorder()
        assert held.reply_texts == ["Please keep it friendly."]
