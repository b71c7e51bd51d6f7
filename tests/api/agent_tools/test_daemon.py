"""The daemon hub and client over real loopback WebSockets, with MCP relayed for a job."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from langbot_plugin.api.agent_tools._daemon_wire import decode, encode
from langbot_plugin.api.agent_tools.daemon import (
    AgentRuntimeDaemonClient,
    AgentRuntimeDaemonError,
    AgentRuntimeDaemonHub,
    agent_runtime_daemon_config_from_plugin_config,
    get_agent_runtime_daemon_hub,
    handle_agent_runtime_mcp_payload,
)
from langbot_plugin.rpc.transport_ws import connect_ws
from tests.api.agent_tools.helpers import http_client, running, structured, tool_names

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def hub_serving(token: str = "") -> AsyncGenerator[AgentRuntimeDaemonHub]:
    hub = AgentRuntimeDaemonHub(error_code_prefix="probe")
    await hub.start(host="127.0.0.1", port=0, token=token)
    try:
        yield hub
    finally:
        await hub.stop()


@asynccontextmanager
async def daemon_running(
    daemon: AgentRuntimeDaemonClient, hub: AgentRuntimeDaemonHub
) -> AsyncGenerator[AgentRuntimeDaemonClient]:
    async with anyio.create_task_group() as tg:
        tg.start_soon(daemon.run_forever)
        await hub.wait_for_daemon(daemon.daemon_id, timeout=30)
        yield daemon
        tg.cancel_scope.cancel()


class ToolUsingDaemon(AgentRuntimeDaemonClient):
    """Runs each job by calling the run's LangBot tools through its local MCP proxy."""

    async def run_job(self, job_id: str, payload: dict[str, Any]) -> None:
        proxy = self.create_mcp_proxy(job_id, request_timeout=30)
        proxy.start()
        try:
            config = proxy.mcp_server()
            async with http_client(config.url) as client:
                listed = sorted(tool_names(await client.list_tools()))
                called = await client.call_tool(
                    "langbot_call_tool", {"tool_name": "t", "parameters": payload}
                )
            await self.emit_event(job_id, {"type": "probe.tools", "data": {"tools": listed}})
            await self.emit_event(
                job_id,
                {"type": "message.completed", "data": {"message": structured(called)}},
            )
        finally:
            await proxy.aclose()


async def test_a_daemon_job_streams_events_and_uses_the_runs_tools() -> None:
    async with running() as run, hub_serving() as hub:
        daemon = ToolUsingDaemon(url=hub.endpoint, daemon_id="laptop", reconnect_delay=0.1)
        async with daemon_running(daemon, hub):
            assert [d["daemon_id"] for d in await hub.list_daemons()] == ["laptop"]
            events = [
                event
                async for event in hub.run_job(
                    daemon_id="laptop", payload={"q": 1}, tools=run.tools(), timeout=30
                )
            ]
    assert events[0]["data"]["tools"] == [
        "langbot_call_tool",
        "langbot_get_current_event",
        "langbot_get_tool_detail",
        "langbot_history_page",
        "langbot_list_assets",
        "langbot_retrieve_knowledge",
    ]
    assert events[1]["data"]["message"] == {"echo": {"q": 1}}
    assert run.peer.last("call_tool") == {
        "run_id": "run-1",
        "tool_name": "t",
        "parameters": {"q": 1},
    }


class WaitingDaemon(AgentRuntimeDaemonClient):
    """Starts jobs and waits until they are cancelled."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.started: list[str] = []
        self.job_started = anyio.Event()
        self.job_cancelled = anyio.Event()

    async def run_job(self, job_id: str, payload: dict[str, Any]) -> None:
        self.started.append(job_id)
        self.job_started.set()
        try:
            await anyio.sleep_forever()
        finally:
            self.job_cancelled.set()


async def next_frame(transport: Any, kind: str) -> dict[str, Any]:
    while True:
        decoded = decode(await transport.receive.receive())
        assert decoded is not None
        if decoded[0] == kind:
            return decoded[1]


async def test_the_hub_refuses_another_daemon_touching_a_job() -> None:
    async with running() as run, hub_serving() as hub:
        owner = WaitingDaemon(url=hub.endpoint, daemon_id="owner", reconnect_delay=0.1)
        async with daemon_running(owner, hub), connect_ws(hub.endpoint) as intruder:
            await intruder.send.send(encode("daemon.hello", daemon_id="intruder", token=""))
            await next_frame(intruder, "daemon.ready")
            jobs = hub.run_job(daemon_id="owner", payload={}, tools=run.tools(), timeout=30)
            first = anyio.Event()
            seen: list[dict[str, Any]] = []
            refused: dict[str, Any] | None = None

            async def consume() -> None:
                async for event in jobs:
                    seen.append(event)
                    first.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(consume)
                await owner.job_started.wait()
                job_id = owner.started[0]
                listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
                await intruder.send.send(
                    encode("mcp.request", request_id="r1", job_id=job_id, payload=listing)
                )
                refused = await next_frame(intruder, "mcp.response")
                fake = {"type": "message.completed", "data": {"message": "forged"}}
                await intruder.send.send(encode("run.event", job_id=job_id, event=fake))
                await intruder.send.send(encode("run.finished", job_id=job_id))
                await intruder.send.send(encode("daemon.ping"))
                await next_frame(intruder, "daemon.pong")  # the hub has read all of it
                daemons = {d["daemon_id"]: d for d in await hub.list_daemons()}
                assert daemons["owner"]["active_jobs"] == [job_id]
                connections = {c["daemon_id"]: c for c in hub.daemon_connections()}
                assert connections["owner"]["active_jobs"] == {job_id}
                assert connections["intruder"]["active_jobs"] == set()
                (session,) = hub.run_sessions()
                assert (session["job_id"], session["daemon_id"]) == (job_id, "owner")
                assert session["tools"] is not None
                assert isinstance(session["started_at"], float)
                connections["owner"]["active_jobs"].clear()  # a copy
                again = {c["daemon_id"]: c for c in hub.daemon_connections()}
                assert again["owner"]["active_jobs"] == {job_id}
                # the owner still drives the job: its event is the first one seen
                await owner.emit_event(job_id, {"type": "probe.owner", "data": {}})
                await first.wait()
                tg.cancel_scope.cancel()
            await jobs.aclose()
    assert refused is not None
    assert refused["status"] == 403
    assert refused["payload"]["error"]["message"] == "this daemon does not own that job"
    assert seen == [{"type": "probe.owner", "data": {}}]
    assert run.peer.calls == []


async def test_leaving_a_job_early_cancels_it_on_the_daemon() -> None:
    async with running() as run, hub_serving() as hub:
        daemon = WaitingDaemon(url=hub.endpoint, daemon_id="d", reconnect_delay=0.1)
        async with daemon_running(daemon, hub):
            jobs = hub.run_job(daemon_id="d", payload={}, tools=run.tools(), timeout=30)
            async with anyio.create_task_group() as tg:

                async def consume() -> None:
                    async for _ in jobs:
                        pass

                tg.start_soon(consume)
                await daemon.job_started.wait()
                tg.cancel_scope.cancel()  # the run is cancelled while waiting for events
            await jobs.aclose()
            await daemon.job_cancelled.wait()
            assert (await hub.list_daemons())[0]["active_jobs"] == []
            assert hub.run_sessions() == []


async def test_a_job_fails_when_its_daemon_is_replaced() -> None:
    async with running() as run, hub_serving() as hub:
        first = WaitingDaemon(url=hub.endpoint, daemon_id="same", reconnect_delay=60)
        async with daemon_running(first, hub):
            events: list[dict[str, Any]] = []
            async with anyio.create_task_group() as tg:

                async def consume() -> None:
                    async for event in hub.run_job(
                        daemon_id="same", payload={}, tools=run.tools(), timeout=30
                    ):
                        events.append(event)

                tg.start_soon(consume)
                await first.job_started.wait()
                async with connect_ws(hub.endpoint) as second:
                    await second.send.send(encode("daemon.hello", daemon_id="same"))
                    await next_frame(second, "daemon.ready")
            await first.job_cancelled.wait()
    assert events == [
        {
            "type": "run.failed",
            "data": {
                "error": "daemon same disconnected",
                "code": "probe.daemon_disconnected",
                "retryable": True,
            },
        }
    ]


async def test_tokens_and_offline_daemons() -> None:
    async with hub_serving(token="s3cret") as hub:
        wrong = AgentRuntimeDaemonClient(url=hub.endpoint, daemon_id="x", token="guess")
        with pytest.raises(AgentRuntimeDaemonError, match="invalid token"):
            await wrong.run_once()
        with pytest.raises(AgentRuntimeDaemonError) as offline:
            await hub.wait_for_daemon("x", timeout=0.05)
        assert offline.value.code == "probe.daemon_offline"
        with pytest.raises(AgentRuntimeDaemonError) as conflict:
            await hub.start(host="127.0.0.1", port=0, token="other")
        assert conflict.value.code == "probe.daemon_hub_conflict"
    open_hub = AgentRuntimeDaemonHub(error_code_prefix="acp")
    with pytest.raises(AgentRuntimeDaemonError) as tokenless:
        await open_hub.start(host="0.0.0.0", port=0)
    assert tokenless.value.code == "acp.daemon_hub_token_required"
    with pytest.raises(AgentRuntimeDaemonError) as stopped:
        await anext(open_hub.run_job(daemon_id="x", payload={}, tools=None, timeout=1))
    assert stopped.value.code == "acp.daemon_hub_not_started"
    assert get_agent_runtime_daemon_hub("probe-key") is get_agent_runtime_daemon_hub("probe-key")


def test_daemon_settings_come_from_the_plugin_config_then_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("LANGBOT_ACP_DAEMON_ENABLED", "yes")
    monkeypatch.setenv("LANGBOT_ACP_DAEMON_HOST", "0.0.0.0")
    monkeypatch.setenv("LANGBOT_ACP_DAEMON_PORT", "9001")
    monkeypatch.setenv("LANGBOT_ACP_DAEMON_TOKEN", "env-token")
    config = agent_runtime_daemon_config_from_plugin_config(
        {"daemon-port": "9100", "daemon-token": "plugin-token"}, env_prefix="LANGBOT_ACP_DAEMON"
    )
    assert config == {"enabled": True, "host": "0.0.0.0", "port": 9100, "token": "plugin-token"}
    assert agent_runtime_daemon_config_from_plugin_config(None) == {
        "enabled": False,
        "host": "127.0.0.1",
        "port": 8766,
        "token": "",
    }


async def test_relayed_payloads_are_answered_by_the_mcp_server() -> None:
    async with running() as run:
        tools = run.tools()
        initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        assert await handle_agent_runtime_mcp_payload(tools, initialized) is None
        missing = await handle_agent_runtime_mcp_payload(
            tools, {"jsonrpc": "2.0", "id": 7, "method": "missing/method"}
        )
        # method not found (2.x); 1.x reports a request it cannot parse as invalid params
        assert missing["error"]["code"] in (-32601, -32602)
        listed = await handle_agent_runtime_mcp_payload(
            tools, {"jsonrpc": "2.0", "id": 8, "method": "tools/list", "params": {}}
        )
        assert "langbot_call_tool" in json.dumps(listed)
