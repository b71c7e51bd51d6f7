"""The per-run bridge: an ``mcp`` client over real loopback HTTP and over stdio."""

from __future__ import annotations

import sys
from typing import Any

import anyio
import pytest

from langbot_plugin.api.agent_tools import AgentRunMCPBridge
from tests.api.agent_tools.helpers import (
    errored,
    http_client,
    running,
    stdio_client,
    structured,
    text_of,
    tool_names,
)
from tests.api.runs import run_context

pytestmark = pytest.mark.anyio


def leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in leaves(inner)]
    return [exc]


async def test_an_mcp_client_calls_the_bridge_over_loopback_http() -> None:
    async with running() as run, AgentRunMCPBridge(run.tools()) as bridge:
        assert bridge.endpoint.startswith("http://127.0.0.1:")
        config = bridge.mcp_server(transport="http")
        assert config.url == bridge.http_mcp_endpoint
        async with http_client(config.url, config.headers) as client:
            assert client.server_info.name == "langbot-agent"
            listed = await client.list_tools()
            assert "langbot_call_tool" in tool_names(listed)
            result = await client.call_tool(
                "langbot_call_tool", {"tool_name": "t", "parameters": {"city": "Oslo"}}
            )
            assert errored(result) is False
            assert structured(result) == {"echo": {"city": "Oslo"}}
            refused = await client.call_tool("langbot_call_tool", {"tool_name": "secret"})
            assert errored(refused) is True
            assert text_of(refused).startswith("permission_denied.resource:")
    assert run.peer.actions() == ["call_tool"]
    assert run.peer.last("call_tool") == {
        "run_id": "run-1",
        "tool_name": "t",
        "parameters": {"city": "Oslo"},
    }


async def test_the_bridge_lists_only_what_the_run_was_granted() -> None:
    ctx = run_context(tools=[], knowledge_bases=[{"kb_id": "kb", "operations": ["retrieve"]}])
    async with running(ctx) as run, AgentRunMCPBridge(run.tools()) as bridge:
        headers = {"X-LangBot-Agent-MCP-Token": bridge.token}
        async with http_client(f"{bridge.endpoint}/mcp", headers) as client:
            listed = tool_names(await client.list_tools())
    assert listed == {
        "langbot_list_assets",
        "langbot_get_current_event",
        "langbot_history_page",
        "langbot_retrieve_knowledge",
    }


async def test_requests_without_the_run_token_are_refused() -> None:
    import httpx2

    async with running() as run, AgentRunMCPBridge(run.tools()) as bridge:
        ping = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
        async with httpx2.AsyncClient() as http:
            for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": bridge.token}):
                answer = await http.post(bridge.http_mcp_endpoint, json=ping, headers=headers)
                assert answer.status_code == 401
                assert answer.json() == {
                    "ok": False,
                    "error": "a valid LangBot run token is required",
                }
            health = await http.get(f"{bridge.endpoint}/healthz")
            assert health.json() == {"ok": True}
        with pytest.raises(BaseExceptionGroup) as refused:
            async with http_client(bridge.http_mcp_endpoint, {"Authorization": "Bearer x"}):
                pass
        # 2.x raises its MCPError; 1.x lets the client's HTTP 401 through
        assert any(
            type(leaf).__name__ in ("MCPError", "HTTPStatusError") for leaf in leaves(refused.value)
        )
    assert run.peer.calls == []


async def test_an_mcp_client_calls_the_bridge_over_stdio() -> None:
    async with running() as run, AgentRunMCPBridge(run.tools()) as bridge:
        config = bridge.mcp_server()
        assert (config.command, config.args) == (
            sys.executable,
            ("-m", "langbot_plugin.api.agent_tools.mcp_stdio"),
        )
        assert config.env["LANGBOT_AGENT_MCP_ENDPOINT"] == bridge.endpoint
        async with stdio_client(config.command, list(config.args), dict(config.env)) as client:
            listed = tool_names(await client.list_tools())
            assert "langbot_history_page" in listed
            page = await client.call_tool("langbot_history_page", {"limit": 3})
            detail = await client.call_tool("langbot_get_tool_detail", {"tool_name": "nope"})
    assert structured(page)["has_more"] is False
    assert errored(detail) is True
    assert "permission_denied.resource" in text_of(detail)
    assert run.peer.actions() == ["history_page"]
    assert run.peer.last("history_page")["limit"] == 3


async def test_the_stdio_relay_exits_when_the_bridge_refuses_its_token() -> None:
    async with running() as run, AgentRunMCPBridge(run.tools()) as bridge:
        env = {**bridge.mcp_server().env, "LANGBOT_AGENT_MCP_TOKEN": "stolen"}
        done = await anyio.run_process(
            [sys.executable, "-m", "langbot_plugin.api.agent_tools.mcp_stdio"],
            env=env,
            check=False,
        )
    assert done.returncode == 1
    assert b"LangBot MCP relay to" in done.stderr
    assert b"MCPError" in done.stderr or b"401 Unauthorized" in done.stderr


async def test_the_stdio_relay_needs_its_environment() -> None:
    done = await anyio.run_process(
        [sys.executable, "-m", "langbot_plugin.api.agent_tools.mcp_stdio"], env={}, check=False
    )
    assert done.returncode == 2
    assert b"LANGBOT_AGENT_MCP_ENDPOINT" in done.stderr


async def test_a_call_past_the_request_timeout_ends_as_an_error_result() -> None:
    async def hang(data: dict[str, Any]) -> dict[str, Any]:
        await anyio.sleep_forever()
        raise AssertionError

    async with (
        running(answers={"call_tool": hang}) as run,
        AgentRunMCPBridge(run.tools(), request_timeout=0.2) as bridge,
    ):
        result = await bridge.handle_http_mcp_request(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "tools/call",
                "params": {"name": "langbot_call_tool", "arguments": {"tool_name": "t"}},
            }
        )
    assert result["id"] == 7
    assert result["result"]["isError"] is True
    assert result["result"]["structuredContent"]["error"]["code"] == "deadline_exceeded"
    await run.peer.cancelled.wait()


async def test_stop_closes_the_port() -> None:
    import httpx2

    async with running() as run:
        bridge = AgentRunMCPBridge(run.tools())
        bridge.start()
        endpoint = bridge.endpoint
        await bridge.aclose()
        with pytest.raises(RuntimeError, match="not started"):
            _ = bridge.endpoint
        async with httpx2.AsyncClient() as http:
            with pytest.raises(httpx2.ConnectError):
                await http.get(f"{endpoint}/healthz")
