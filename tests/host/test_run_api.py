"""The SDK's AgentRunAPIProxy against the host machinery, over a real RPC link.

The runtime stamps ``caller_plugin_identity`` on every forwarded call;
:class:`~tests.support.as_plugin.AsPlugin` does the same here, so the proxy talks to
:class:`LocalHost` as it would through ``lbp rt``.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import pytest

from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIException,
    PermissionDeniedError,
)
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.host import HostTool, LocalHost, ScriptedModel
from langbot_plugin.host.run_host import StartedRun
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.transport_memory import memory_pair
from tests.support.as_plugin import AsPlugin

pytestmark = pytest.mark.anyio

OWNER = "tester/echoplug"


@asynccontextmanager
async def api_for(local: LocalHost, run: StartedRun) -> AsyncGenerator[AgentRunAPIProxy]:
    host_end, plugin_end = memory_pair()
    async with (
        RPCSession(host_end, local, name="host").running(),
        RPCSession(plugin_end, None, name="plugin").running() as session,
    ):
        ctx = AgentRunContext.model_validate(run.context)
        yield AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=AsPlugin(session, OWNER))


def local_host() -> LocalHost:
    local = LocalHost(models={"scripted-model": ScriptedModel(["four", "stream me please"])})
    local.add_tool(HostTool("adder", lambda p: {"sum": p["a"] + p["b"]}, "adds two numbers"))
    return local


async def test_every_run_api_method_against_the_local_host() -> None:
    local = local_host()
    run = await local.start_run(
        OWNER, "echo", "what is 2+2", prompt=[{"role": "system", "content": "be brief"}]
    )
    async with api_for(local, run) as api:
        answer = await api.invoke_llm("scripted-model", [Message(role="user", content="2+2")])
        assert answer.content == "four"
        chunks = [c.content async for c in api.invoke_llm_stream("scripted-model", [])]
        assert "".join(str(c) for c in chunks) == "stream me please"
        assert await api.count_tokens("scripted-model", [Message(role="user", content="a b")]) == 2
        assert (await api.get_tool_detail("adder")).get("description") == "adds two numbers"
        assert await api.call_tool("adder", {"a": 2, "b": 2}) == {"sum": 4}

        assert await api.get_prompt() == [{"role": "system", "content": "be brief"}]
        page = await api.history_page(before_cursor=run.context["context"]["latest_cursor"])
        assert [i.content for i in page.items] == ["what is 2+2"]
        assert (await api.history_search("2+2")).total_count == 1
        event = await api.event_get(run.context["event"]["event_id"])
        assert event.input_summary == "what is 2+2"
        assert [e.event_id for e in (await api.event_page()).items] == [event.event_id]
        assert await local.runs.steer(run.run_id, "also: 3+3?")
        pulled = await api.steering_pull(mode="one")
        assert [i.input.text for i in pulled.items] == ["also: 3+3?"]

        assert await api.state_set("conversation", "external.session_id", "s-1") == {
            "success": True
        }
        assert await api.state_get("conversation", "external.session_id") == {"value": "s-1"}
        assert await api.state_list("conversation") == {
            "keys": ["external.session_id"],
            "has_more": False,
        }
        assert await api.state_delete("conversation", "external.session_id") == {"success": True}

        assert (await api.run_get()).status == "running"
        listed = await api.run_list()
        assert [r.run_id for r in listed.items] == [run.run_id]
        assert (await api.run_events_page()).items == []
        cancelled = await api.run_cancel(reason="enough")
        assert cancelled.cancel_requested_at is not None
        assert run.session.cancel_requested.is_set()


async def test_host_refusals_reach_the_runner_with_their_codes() -> None:
    local = local_host()
    run = await local.start_run(OWNER, "echo", "hi", state_scopes=["conversation"])
    async with api_for(local, run) as api:
        # checks only the host can make: the binding's state policy, the conversation
        with pytest.raises(PermissionDeniedError) as scope:
            await api.state_get("actor", "k")
        assert scope.value.code == "resource_not_granted"
        with pytest.raises(PermissionDeniedError) as other:
            await api.history_page(conversation_id="group_elsewhere")
        assert other.value.code == "resource_not_granted"
        with pytest.raises(AgentAPIException) as missing:
            await api.event_get("no-such-event")
        assert missing.value.code == "not_found"
        with pytest.raises(AgentAPIException) as big:
            await api.state_set("conversation", "k", "x" * 300_000)
        assert big.value.code == "payload_too_large"
        local.runs.registry.finish(run.run_id, "completed")
        with pytest.raises(PermissionDeniedError) as finished:
            await api.invoke_llm("scripted-model", [])
        assert finished.value.code == "run_not_live"
