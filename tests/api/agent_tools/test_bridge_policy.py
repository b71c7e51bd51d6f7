"""The bridge's policy: an allowlist of MCP servers and a list of dangerous tools,
over a real ``mcp`` client on loopback HTTP; refusals are kept for the run's audit."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from langbot_plugin.api.agent_tools import AgentRunMCPBridge
from langbot_plugin.api.agent_tools.mcp_policy import (
    MCPBridgePolicy,
    MCPServerNotAllowedError,
    note_refusal,
)
from langbot_plugin.api.proxies.run_refusals import RunRefusals
from langbot_plugin.rpc.errors import PermissionDeniedError
from tests.api.agent_tools.helpers import errored, http_client, running, text_of, tool_names

pytestmark = pytest.mark.anyio


def _annotations(listed: Any) -> dict[str, Any]:
    return {
        tool.name: (
            tool.annotations.model_dump(by_alias=True).get("destructiveHint")
            if tool.annotations
            else None
        )
        for tool in listed.tools
    }


async def test_dangerous_tools_are_marked_and_called_by_default() -> None:
    async with running() as run, AgentRunMCPBridge(run.tools()) as bridge:
        config = bridge.mcp_server(transport="http")
        async with http_client(config.url, config.headers) as client:
            hints = _annotations(await client.list_tools())
            assert hints["langbot_call_tool"] is True
            assert not hints["langbot_list_assets"]
            result = await client.call_tool("langbot_call_tool", {"tool_name": "t"})
            assert errored(result) is False
    assert run.peer.actions() == ["call_tool"]


async def test_refused_dangerous_tools_are_hidden_and_refused() -> None:
    policy = MCPBridgePolicy(dangerous="refuse")
    async with running() as run, AgentRunMCPBridge(run.tools(), policy=policy) as bridge:
        config = bridge.mcp_server(transport="http")
        async with http_client(config.url, config.headers) as client:
            listed = tool_names(await client.list_tools())
            assert "langbot_call_tool" not in listed
            assert "langbot_list_assets" in listed
            refused = await client.call_tool("langbot_call_tool", {"tool_name": "t"})
            assert errored(refused) is True
            assert text_of(refused).startswith("permission_denied:")
    assert run.peer.actions() == []  # nothing reached the host


async def test_a_harness_config_naming_a_server_outside_the_allowlist_is_refused() -> None:
    policy = MCPBridgePolicy(allowed_servers=frozenset({"files"}))
    async with (
        running() as run,
        AgentRunMCPBridge(run.tools(), policy=policy) as bridge,
        AgentRunMCPBridge(run.tools()) as open_bridge,
    ):
        base = {"mcpServers": {"files": {"command": "fs-mcp"}}}
        merged = bridge.merged_mcp_config(base)
        assert set(merged["mcpServers"]) == {"files", "langbot_agent"}
        with pytest.raises(MCPServerNotAllowedError) as info:
            bridge.merged_mcp_config({"mcpServers": {"files": {}, "shell": {"command": "sh"}}})
        assert info.value.code == "mcp_server_not_allowed"
        assert info.value.details["servers"] == ["shell"]
        assert open_bridge.merged_mcp_config({"mcpServers": {"shell": {}}})  # no allowlist: any


def test_a_refusal_is_kept_for_the_runs_audit() -> None:
    refusals = RunRefusals("run-1", None)
    api = SimpleNamespace(_binding=SimpleNamespace(refusals=refusals))
    note_refusal(api, "langbot_call_tool", "langbot_call_tool", PermissionDeniedError("no"))
    (entry,) = refusals.pending
    assert (entry.action, entry.code, entry.origin) == (
        "langbot_call_tool",
        "permission_denied",
        "sdk",
    )
