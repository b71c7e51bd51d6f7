"""The runner, its external agent and the run's MCP bridge, with LangBot's tools played
by the harness's host."""

from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.testing import HostTool, PluginHarness

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio


def weather(parameters: dict[str, Any]) -> str:
    return f"sunny in {parameters['text']}"


async def test_the_agent_calls_a_langbot_tool_through_mcp() -> None:
    tool = HostTool("weather", weather, description="The weather of a city")
    async with PluginHarness(PLUGIN, tools=[tool]) as h:
        reply = await h.run_agent("weather Paris")
        assert reply.ok, reply.error
        assert reply.text == "weather says: sunny in Paris"
        assert reply.types == ["tool.call.started", "tool.call.completed", "run.completed"]
        assert tool.calls == [{"text": "Paris"}]
        (call,) = h.calls_of("call_tool")
        assert call.data["run_id"] == reply.run_id  # checked against the run's grants


async def test_a_tool_the_run_was_not_granted_is_refused() -> None:
    tool = HostTool("weather", weather)
    async with PluginHarness(PLUGIN, tools=[tool]) as h:
        reply = await h.run_agent("stocks ACME")
        assert reply.ok
        assert reply.text.startswith("I could not use stocks:")
        completed = reply.of_type("tool.call.completed")[0]
        assert completed.data["error"]
        assert tool.calls == []
        assert h.calls_of("call_tool") == []
