"""The runner against a fake OpenAI-compatible server on 127.0.0.1."""

from pathlib import Path

import pytest
from fake_openai import fake_openai  # tests/fake_openai.py (pytest puts tests/ on the path)

from langbot_plugin.testing import PluginHarness

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio


async def test_the_answer_streams_from_the_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    async with fake_openai(answer="Paris is the capital.") as server:
        settings = {"base_url": server.base_url, "model": "tiny", "api_key_env": "FAKE_KEY"}
        async with PluginHarness(PLUGIN) as h:
            reply = await h.run_agent("capital of France?", config=settings)
    assert (reply.ok, reply.text) == (True, "Paris is the capital.")
    deltas = [r.text for r in reply.of_type("message.delta")]
    assert deltas == ["Paris", "Paris is", "Paris is the", "Paris is the capital."]
    assert reply.usage is not None
    assert reply.usage["total_tokens"] == 11
    (sent,) = server.requests
    assert (sent["model"], sent["stream"]) == ("tiny", True)
    assert sent["messages"][-1] == {"role": "user", "content": "capital of France?"}
    assert server.headers[0]["Authorization"] == "Bearer sk-test"


async def test_the_conversation_is_remembered_in_state() -> None:
    async with fake_openai(answer="Noted.") as server:
        settings = {"base_url": server.base_url, "remember_turns": 1}
        async with PluginHarness(PLUGIN) as h:
            await h.run_agent("my name is Ann", config=settings)
            await h.run_agent("what is my name?", config=settings)
            history = (await h.state("conversation"))["history"]
            h.new_conversation()
            await h.run_agent("hello", config=settings)
    assert server.requests[1]["messages"][1:] == [
        {"role": "user", "content": "my name is Ann"},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "content": "what is my name?"},
    ]
    assert history == [
        {"role": "user", "content": "what is my name?"},
        {"role": "assistant", "content": "Noted."},
    ]
    assert len(server.requests[2]["messages"]) == 2  # a new conversation starts empty


async def test_an_endpoint_error_fails_the_run_with_its_reason() -> None:
    async with fake_openai(status=429) as server, PluginHarness(PLUGIN) as h:
        reply = await h.run_agent("hi", config={"base_url": server.base_url})
    assert reply.status == "failed"
    assert reply.error is not None
    assert reply.error["code"] == "openai.http_error"
    assert reply.error["retryable"] is True
    assert "429" in reply.error["error"]
