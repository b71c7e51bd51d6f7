"""The Protocol v1 runner on the harness: its namespaced calls, its context policy
(the host inlines the conversation's tail) and its artifact refusal."""

from pathlib import Path

import pytest

from langbot_plugin.testing import PluginHarness, ScriptedLLM

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio


async def test_the_second_turn_gets_the_first_inlined() -> None:
    llm = ScriptedLLM(["Noted.", "Noted again."])
    async with PluginHarness(PLUGIN, llm=llm) as h:
        first = await h.run_agent("buy milk")
        second = await h.run_agent("buy bread")
    assert first.ok, first.error
    assert second.ok, second.error
    assert first.text == "Noted. [turn 1, 0 inlined, 1 notes, artifacts: not_found]"
    # the first turn kept its note list ("note-1", 6 bytes) as an artifact
    assert second.text == "Noted again. [turn 2, 2 inlined, 2 notes, artifacts: 6 bytes]"
    earlier, answer, current = llm.last_request
    assert (earlier["role"], earlier["content"]) == ("user", "buy milk")
    assert answer["role"] == "assistant"
    assert answer["content"].startswith("Noted.")
    assert (current["role"], current["content"]) == ("user", "buy bread")


async def test_it_runs_in_a_real_runtime_process() -> None:
    async with PluginHarness(PLUGIN, llm=ScriptedLLM(["Noted."]), process=True) as h:
        reply = await h.run_agent("buy milk")
    assert reply.ok, reply.error
    assert reply.text == "Noted. [turn 1, 0 inlined, 1 notes, artifacts: not_found]"


async def test_without_a_model_it_fails_with_its_code() -> None:
    async with PluginHarness(PLUGIN) as h:
        reply = await h.run_agent("hi", resources={"models": []})
    assert reply.error is not None
    assert reply.error["code"] == "notes.no_model"
