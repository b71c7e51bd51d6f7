"""``langbot_plugin.testing.PluginHarness`` against the example plugin: in memory and
in a real ``lbp rt`` child, and what it refuses."""

from __future__ import annotations

import asyncio
import shutil
import sys
from pathlib import Path

import pytest

from langbot_plugin.testing import HarnessError, PluginHarness, ScriptedLLM

pytestmark = pytest.mark.anyio

HELLO = Path(__file__).resolve().parents[2] / "examples" / "hello_agent"
ANSWER = "Plugins are small folders LangBot runs."


async def test_a_run_streams_through_the_runtime_and_the_host_sees_its_calls() -> None:
    llm = ScriptedLLM([ANSWER], chunk_chars=10)
    async with PluginHarness(HELLO, llm=llm) as h:
        reply = await h.run_agent("what is a plugin?")
        assert (reply.ok, reply.text) == (True, ANSWER)
        deltas = [r.text for r in reply.of_type("message.delta")]
        assert deltas == [ANSWER[:10], ANSWER[:20], ANSWER[:30], ANSWER]  # cumulative
        assert reply.types[-1] == "run.completed"
        assert [i["type"] for i in reply.items] == reply.types
        (call,) = h.calls_of("invoke_llm_stream")
        assert call.data["run_id"] == reply.run_id
        system, user = llm.last_request
        assert system["content"] == "You are a friendly assistant."  # the runner's default
        assert user["content"] == "what is a plugin?"

        seen: list[str] = []
        await h.run_agent(
            "again", config={"system-prompt": "Be brief."}, on_result=lambda r: seen.append(r.type)
        )
        assert llm.last_request[0]["content"] == "Be brief."
        assert seen == reply.types


async def test_commands_and_tools_answer_as_langbot_gets_them() -> None:
    async with PluginHarness(HELLO) as h:
        (reply,) = await h.command("time")
        assert reply.text is not None
        assert reply.text.startswith("It is ")
        assert await h.call_tool("add", {"a": 2, "b": 40}) == {"sum": 42.0}
        assert h.component("Tool", "add") is not None
        assert h.runner_names() == ["assistant"]


@pytest.mark.timeout(120)
async def test_process_mode_runs_the_plugin_in_a_real_runtime(tmp_path: Path) -> None:
    async with PluginHarness(HELLO, llm=ScriptedLLM([ANSWER]), process=True, workdir=tmp_path) as h:
        reply = await h.run_agent("hi")
        assert reply.text == ANSWER
        assert await h.call_tool("add", {"a": 1, "b": 1}) == {"sum": 2.0}
        (answer,) = await h.command("time")
        assert (answer.text or "").startswith("It is ")
        with pytest.raises(HarnessError, match="another process"):
            _ = h.plugin
    assert (tmp_path / "dist" / "langbot-demo-hello_agent-0.1.0.lbpkg").is_file()


async def test_a_run_gets_only_what_the_runner_asks_for(tmp_path: Path) -> None:
    plugin = Path(shutil.copytree(HELLO, tmp_path / "hello"))
    manifest = plugin / "components/agent_runner/assistant.yaml"
    manifest.write_text(manifest.read_text().replace("models: [invoke, stream]", "models: []"))
    async with PluginHarness(plugin) as h:
        reply = await h.run_agent("hi")
        assert reply.status == "failed"
        assert reply.error is not None
        assert reply.error["code"] == "demo.no_model"
        assert h.calls_of("invoke_llm_stream") == []


async def test_one_plugin_folder_at_a_time_in_memory(tmp_path: Path) -> None:
    other = Path(shutil.copytree(HELLO, tmp_path / "other"))
    async with PluginHarness(HELLO):
        with pytest.raises(HarnessError, match="another plugin's modules are loaded"):
            async with PluginHarness(other):
                pass
    async with PluginHarness(other):  # the first one's modules were forgotten
        assert Path(str(sys.modules["main"].__file__)).parent == other
    assert [n for n in sys.modules if n in ("main", "components")] == []  # a namespace package too


async def test_a_broken_plugin_is_refused_with_where_and_why(tmp_path: Path) -> None:
    plugin = Path(shutil.copytree(HELLO, tmp_path / "broken"))
    (plugin / "components/tools/add.py").write_text("def broken(:\n")
    with pytest.raises(HarnessError) as info:
        async with PluginHarness(plugin):
            pass
    assert "components/tools/add.py:1" in str(info.value)
    failing = Path(shutil.copytree(HELLO, tmp_path / "failing"))
    (failing / "main.py").write_text(
        "from langbot_plugin.api.definition.plugin import BasePlugin\n\n\n"
        "class HelloAgent(BasePlugin):\n"
        "    async def initialize(self) -> None:\n"
        "        raise RuntimeError('no API key configured')\n"
    )
    with pytest.raises(HarnessError, match="did not start: RuntimeError: no API key configured"):
        async with PluginHarness(failing):
            pass
    with pytest.raises(HarnessError, match="no runner 'nope'"):
        async with PluginHarness(HELLO) as h:
            await h.run_agent("hi", runner="nope")


def test_plain_asyncio_works_too() -> None:
    async def main() -> str:
        async with PluginHarness(HELLO, llm=ScriptedLLM(["from asyncio.run"])) as h:
            return (await h.run_agent("hi")).text

    assert asyncio.run(main()) == "from asyncio.run"


PLUGIN_RUNNER = """
from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import (
    AgentRunResult,
    PermissionDeniedError,
)
from langbot_plugin.api.entities.builtin.provider.message import Message


class Assistant(AgentRunner):
    async def run(self, ctx):
        models = await self.plugin.get_llm_models()  # the run's, not the workspace's
        reply = await self.plugin.invoke_llm(models[0], [Message(role="user", content="hi")])
        try:
            await self.plugin.invoke_llm("not-granted", [])
            refused = "sent"
        except PermissionDeniedError as exc:
            refused = exc.code
        text = f"{reply.content}|{refused}|{models}"
        yield AgentRunResult.run_completed(ctx.run_id, Message(role="assistant", content=text))
"""


async def test_a_runner_gets_the_plugin_and_its_calls_are_the_runs(tmp_path: Path) -> None:
    # as in 0.7.18: the worker sets runner.plugin, and inside a run its host calls that
    # the run API also has are the run's (its grants, its run_id)
    plugin = Path(shutil.copytree(HELLO, tmp_path / "hello"))
    (plugin / "components/agent_runner/assistant.py").write_text(PLUGIN_RUNNER)
    async with PluginHarness(plugin, llm=ScriptedLLM([ANSWER])) as h:
        reply = await h.run_agent("hi")
        assert reply.ok, reply.error
        answer, refused, models = (reply.text or "").split("|")
        assert answer == ANSWER
        assert refused == "permission_denied.resource"  # refused before sending
        assert models != "[]"
        (call,) = h.calls_of("invoke_llm")
        assert call.data["run_id"] == reply.run_id
        assert h.calls_of("get_llm_models") == []  # answered from the run's grants


COUNTER_RUNNER = """
from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner
from langbot_plugin.api.entities.builtin.agent_runner import AgentRunResult
from langbot_plugin.api.entities.builtin.provider.message import Message


class Counter(AgentRunner):
    async def run(self, ctx):
        await ctx.state_set("conversation", "counted", ctx.input.to_text())
        yield AgentRunResult.run_completed(ctx.run_id, Message(role="assistant", content="ok"))
"""

COUNTER_MANIFEST = """apiVersion: langbot/v1
kind: AgentRunner
metadata:
  name: counter
  label:
    en_US: Counter
spec: {}
execution:
  python:
    path: counter.py
    attr: Counter
"""


async def test_state_with_several_runners_reads_the_last_runs_runner(tmp_path: Path) -> None:
    plugin = Path(shutil.copytree(HELLO, tmp_path / "hello"))
    (plugin / "components/agent_runner/counter.py").write_text(COUNTER_RUNNER)
    (plugin / "components/agent_runner/counter.yaml").write_text(COUNTER_MANIFEST)
    async with PluginHarness(plugin, llm=ScriptedLLM([ANSWER])) as h:
        with pytest.raises(HarnessError, match="several runners: pass runner=NAME"):
            await h.state("conversation")  # no run yet, nothing to go by
        reply = await h.run_agent("three", runner="counter")
        assert reply.ok, reply.error
        assert await h.state("conversation") == {"counted": "three"}
        assert await h.state("conversation", runner="assistant") == {}
