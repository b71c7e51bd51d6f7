"""The runner, the command and the tool of Hello Agent, driven as LangBot drives them."""

import re
from pathlib import Path

import pytest

from langbot_plugin.testing import PluginHarness, ScriptedLLM

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio


async def test_the_assistant_streams_the_models_answer() -> None:
    llm = ScriptedLLM(["Hello! How can I help?"], chunk_chars=6)
    async with PluginHarness(PLUGIN, llm=llm) as h:
        reply = await h.run_agent("hi")
    assert (reply.ok, reply.text) == (True, "Hello! How can I help?")
    deltas = [r.text for r in reply.of_type("message.delta")]
    assert deltas[0] == "Hello!"
    assert deltas[-1] == reply.text  # each delta carries the whole text so far
    system, user = llm.last_request
    assert (system["role"], system["content"]) == ("system", "You are a friendly assistant.")
    assert (user["role"], user["content"]) == ("user", "hi")


async def test_the_system_prompt_is_a_setting() -> None:
    llm = ScriptedLLM()
    async with PluginHarness(PLUGIN, llm=llm) as h:
        await h.run_agent("hi", config={"system-prompt": "Answer in French."})
    assert llm.last_request[0]["content"] == "Answer in French."


async def test_without_a_model_the_run_fails_clearly() -> None:
    async with PluginHarness(PLUGIN) as h:
        reply = await h.run_agent("hi", resources={"models": []})
    assert reply.status == "failed"
    assert reply.error is not None
    assert reply.error["code"] == "demo.no_model"


async def test_time_and_add() -> None:
    async with PluginHarness(PLUGIN) as h:
        (answer,) = await h.command("time")
        assert re.fullmatch(r"It is \d\d:\d\d:\d\d UTC\.", answer.text or "")
        assert await h.call_tool("add", {"a": 2, "b": 40}) == {"sum": 42.0}
