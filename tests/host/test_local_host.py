"""LocalHost as a faithful host for agent runs, through a real ``lbp rt``."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from langbot_plugin.host import HostTool, LocalHost, PluginRuntimeClient
from langbot_plugin.host.results import NormalizedResult
from langbot_plugin.protocol.containers import PluginSettings
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.errors import RPCError
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.stack import host_here
from tests.runtime.peers import ScriptedPlugin, running_runtime
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def connected(local: LocalHost) -> AsyncGenerator[tuple[PluginRuntimeClient, RPCSession]]:
    plugin = ScriptedPlugin()
    async with (
        running_runtime() as runtime,
        host_here(runtime, local) as client,
    ):
        key = await client.get_debug_key()
        async with plugin.connected(runtime, key) as session:
            yield client, session


async def test_a_run_through_the_runtime_is_recorded_by_the_host() -> None:
    local = LocalHost()
    async with connected(local) as (client, _session):
        outcome = await local.run(client, "tester", "echoplug", "echo", "hi there")
    assert outcome.status == "completed"
    assert outcome.messages == ["echo-runner: hi there"]
    session = local.runs.registry.require(outcome.run_id)
    assert session.plugin_identity == "tester/echoplug"
    assert [e["type"] for e in session.events] == ["run.completed"]
    latest, count = await local.runs.transcript.latest(session.scope)
    assert (latest is not None, count) == (True, 2)


async def test_the_runners_calls_reach_the_host_services_and_are_authorized() -> None:
    local = LocalHost()
    local.add_tool(HostTool("adder", lambda p: {"sum": p["a"] + p["b"]}, "adds"))
    first_item = anyio.Event()
    outcome_box: list[Any] = []

    def on_result(_result: NormalizedResult) -> None:
        first_item.set()

    async with connected(local) as (client, plugin), anyio.create_task_group() as tg:

        async def run() -> None:
            outcome_box.append(
                await local.run(
                    client,
                    "tester",
                    "echoplug",
                    "echo",
                    "forever",
                    on_result=on_result,
                    state_scopes=["conversation"],
                )
            )

        tg.start_soon(run)
        await first_item.wait()
        [live] = local.runs.registry.active()
        base = {"run_id": live.run_id}

        stored = {**base, "scope": "conversation", "key": "external.session_id", "value": "s1"}
        assert await plugin.call("state_set", stored) == {"success": True}
        key = live.state_key("conversation")
        assert key is not None
        assert await local.runs.state.get(key, "external.session_id") == "s1"
        page = await plugin.call("history_page", {**base, "limit": 5})
        assert [i["content"] for i in page["items"]] == ["forever"]
        tool = await plugin.call(
            "call_tool", {**base, "tool_name": "adder", "parameters": {"a": 2, "b": 3}}
        )
        assert tool == {"result": {"sum": 5}}
        detail = await plugin.call("get_tool_detail", {**base, "tool_name": "adder"})
        assert detail["tool"]["description"] == "adds"
        tokens = await plugin.call(
            "count_tokens",
            {
                **base,
                "llm_model_uuid": "scripted-model",
                "messages": [{"role": "user", "content": "a b c"}],
            },
        )
        assert tokens == {"tokens": 3}
        # refused by the host, not the runtime: the binding disabled the actor scope
        with pytest.raises(RPCError) as info:
            await plugin.call("state_get", {**base, "scope": "actor", "key": "k"})
        assert info.value.code == "resource_not_granted"

        # the runner asks for its own run to stop: the host closes the stream
        await plugin.call("run_cancel", {**base, "reason": "done here"})
    [outcome] = outcome_box
    assert outcome.status == "cancelled"
    assert outcome.error["error"] == "done here"


async def test_a_host_cancel_stops_the_runner_promptly() -> None:
    local = LocalHost()
    plugin = ScriptedPlugin()
    cancelled: list[str] = []

    def stop_after_three(result: NormalizedResult) -> None:
        if result.sequence == 3:
            [live] = local.runs.registry.active()
            local.runs.cancel(live.run_id, "stop")
            cancelled.append(live.run_id)

    async with (
        running_runtime() as runtime,
        host_here(runtime, local) as client,
    ):
        key = await client.get_debug_key()
        async with plugin.connected(runtime, key):
            outcome = await local.run(
                client, "tester", "echoplug", "echo", "forever", on_result=stop_after_three
            )
            with anyio.fail_after(PATIENCE):
                await plugin.run_closed.wait()
    assert outcome.status == "cancelled"
    assert outcome.text == "..."
    assert outcome.run_id == cancelled[0]


async def test_the_installation_binding_decides_who_is_calling() -> None:
    local = LocalHost(strict_runs=True)
    local.settings["tester/echoplug"] = PluginSettings(installation_uuid="inst-1")
    local.settings["other/plugin"] = PluginSettings(installation_uuid="inst-2")
    run = await local.start_run("tester/echoplug", "echo", "x")
    binding = {"instance_uuid": "i", "workspace_uuid": "w", "installation_uuid": "inst-1"}
    other_binding = {**binding, "installation_uuid": "inst-2"}
    state = {"run_id": run.run_id, "scope": "runner", "key": "k"}
    host_end, runtime_end = memory_pair()
    async with (
        RPCSession(host_end, local, name="host").running(),
        RPCSession(runtime_end, None, name="runtime").running() as rt,
    ):
        assert await rt.call("state_get", state, context=binding) == {"value": None}
        claims = {**state, "caller_plugin_identity": "tester/echoplug"}
        assert await rt.call("state_get", claims, context=binding) == {"value": None}
        for data, context in [
            ({**state, "caller_plugin_identity": "other/plugin"}, binding),
            (state, other_binding),
            (state, {"placement_generation": "not a number"}),
        ]:
            with pytest.raises(RPCError) as info:
                await rt.call("state_get", data, context=context)
            assert info.value.code == "run_not_owned"
        llm = {"llm_model_uuid": "scripted-model", "messages": [], "run_id": "elsewhere"}
        with pytest.raises(RPCError) as strict:
            await rt.call("invoke_llm", {**llm, "caller_plugin_identity": "tester/echoplug"})
        assert strict.value.code == "run_not_live"
    assert [c.action for c in local.calls] == ["state_get"] * 5 + ["invoke_llm"]


async def test_replies_sent_messages_and_query_variables_are_kept() -> None:
    from langbot_plugin.protocol.host_api import messaging

    local = LocalHost()
    chain = [{"type": "Plain", "text": "pong"}]
    host_end, runtime_end = memory_pair()
    async with (
        RPCSession(host_end, local, name="host").running(),
        RPCSession(runtime_end, None, name="runtime").running() as rt,
    ):
        await messaging.REPLY_MESSAGE.call(rt, {"query_id": 7, "message_chain": chain})
        await messaging.SEND_MESSAGE.call(
            rt,
            {"bot_uuid": "b", "target_type": "group", "target_id": "g1", "message_chain": chain},
        )
        await messaging.SET_QUERY_VAR.call(rt, {"query_id": 7, "key": "lang", "value": "fr"})
        got = await messaging.GET_QUERY_VAR.call(rt, {"query_id": 7, "key": "lang"})
        other = await messaging.GET_QUERY_VARS.call(rt, {"query_id": 8})
        bot = await messaging.GET_BOT_UUID.call(rt, {"query_id": 7})
    assert (got.value, other.vars, bot.bot_uuid) == ("fr", {}, "local-bot")
    assert [(m.action, m.text, m.query_id, m.target) for m in local.queries.sent] == [
        ("reply_message", "pong", 7, None),
        ("send_message", "pong", None, ("group", "g1")),
    ]
    assert local.queries.texts == ["pong", "pong"]
