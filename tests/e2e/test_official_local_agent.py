"""The official LocalAgent runner, unmodified, completes a run on this SDK.

It runs under real ``lbp rt`` and ``lbp run`` processes against an in-memory host whose
scripted model first asks for a tool and then answers: LocalAgent calls the host tool
through its run API, streams the answer, and completes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.host import LocalHost, ScriptedModel
from langbot_plugin.host.scripted import HostTool
from tests.e2e.processes import host_for, lbp_rt, lbp_run, plugin_listed, wait_until
from tests.support.official import LOCAL_AGENT, materialize, need

pytestmark = pytest.mark.anyio

TOOL_CALL = {
    "role": "assistant",
    "content": "",
    "tool_calls": [
        {
            "id": "call-1",
            "type": "function",
            "function": {"name": "weather", "arguments": json.dumps({"city": "Paris"})},
        }
    ],
}
# LocalAgent emits a delta every 8 model chunks: 4-character chunks give several deltas.
ANSWER = "It is sunny in Paris today, 21 degrees, with a light breeze from the west and no rain expected."


async def test_local_agent_runs_with_a_tool_call_and_streaming(tmp_path: Path) -> None:
    asked: list[dict[str, Any]] = []

    async def weather(parameters: dict[str, Any]) -> dict[str, Any]:
        asked.append(parameters)
        return {"city": parameters.get("city"), "sky": "sunny", "celsius": 21}

    model = ScriptedModel([TOOL_CALL, ANSWER], model_uuid="scripted-model", chunk_chars=4)
    local = LocalHost(models={"scripted-model": model})
    local.add_tool(
        HostTool(
            name="weather",
            function=weather,
            description="Current weather of a city",
            parameters={"type": "object", "properties": {"city": {"type": "string"}}},
        )
    )
    plugin = materialize(need(LOCAL_AGENT), "", tmp_path / "local-agent")
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        key = await host.get_debug_key()
        async with lbp_run(plugin, runtime.debug_url, key, "--no-reload"):
            await wait_until(lambda: plugin_listed(host, "langbot-team/LocalAgent"), 60)
            runners = [r["manifest"]["id"] for r in await host.list_runners()]
            assert runners == ["plugin:langbot-team/LocalAgent/default"]

            outcome = await local.run(
                host,
                "langbot-team",
                "LocalAgent",
                "default",
                "What is the weather in Paris?",
                config={
                    "model": {"primary": "scripted-model", "fallbacks": []},
                    "prompt": [{"role": "system", "content": "You are helpful."}],
                },
            )

    assert outcome.status == "completed", outcome.error
    assert outcome.text == ANSWER
    assert asked == [{"city": "Paris"}]
    kinds = [r.type for r in outcome.results]
    assert "tool.call.completed" in kinds or "tool.call.started" in kinds
    assert kinds.count("message.delta") >= 2  # the answer was streamed
    deltas = [r.text or "" for r in outcome.results if r.type == "message.delta"]
    assert deltas == sorted(deltas, key=len)  # cumulative: each delta extends the last


def _blank(item: dict[str, Any]) -> bool:
    """A message item with no content (what no host may ever see)."""
    data = item["data"]
    if item["type"] == "message.completed":
        return not str(data["message"].get("content") or "").strip()
    if item["type"] == "message.delta":
        chunk = data["chunk"]
        return not str(chunk.get("all_content") or chunk.get("content") or "").strip()
    return False


async def test_a_model_that_answers_nothing_gets_no_blank_message_out(tmp_path: Path) -> None:
    """LA-08 end to end: LocalAgent, unmodified, over the wire in both dialects, the
    answer streamed or not, and a model whose answer is blank: no blank message reaches
    the host, and the run fails instead of succeeding."""
    local = LocalHost(
        models={"scripted-model": ScriptedModel([" \n "], model_uuid="scripted-model")}
    )
    plugin = materialize(need(LOCAL_AGENT), "", tmp_path / "local-agent")
    config = {
        "model": {"primary": "scripted-model", "fallbacks": []},
        "prompt": [{"role": "system", "content": "You are helpful."}],
    }
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        key = await host.get_debug_key()
        async with lbp_run(plugin, runtime.debug_url, key, "--no-reload"):
            await wait_until(lambda: plugin_listed(host, "langbot-team/LocalAgent"), 60)
            for streaming in (False, True):
                for dialect in ("run_runner", "run_agent"):
                    started = await local.start_run(
                        "langbot-team/LocalAgent",
                        "default",
                        "Say nothing",
                        config=config,
                        supports_streaming=streaming,
                    )
                    items = [
                        item
                        async for item in host.run_runner(
                            "langbot-team",
                            "LocalAgent",
                            "default",
                            started.context,
                            name_on_wire=dialect,
                        )
                    ]
                    case = (streaming, dialect, items)
                    assert not [i for i in items if _blank(i)], case
                    assert items[-1]["type"] == "run.failed", case
                    # not streamed: LocalAgent sent its blank answer as message.completed,
                    # held back, and the run ends empty_result; streamed: LocalAgent
                    # itself finds no first chunk and fails the run (runner.llm_error)
                    expected = "runner.llm_error" if streaming else "empty_result"
                    assert items[-1]["data"]["code"] == expected, case
