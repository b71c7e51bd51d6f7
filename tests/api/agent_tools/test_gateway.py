"""The shared asset gateway: run tokens scope every list and call."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import pytest

from langbot_plugin.api.agent_tools import asset_gateway
from langbot_plugin.api.agent_tools.asset_gateway import (
    AgentAssetGateway,
    get_default_agent_asset_gateway,
)
from tests.api.agent_tools.helpers import (
    errored,
    http_client,
    running,
    structured,
    text_of,
    tool_names,
)
from tests.api.runs import run_context

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def gateway_serving(**kwargs: object) -> AsyncGenerator[AgentAssetGateway]:
    gateway = AgentAssetGateway(**kwargs)  # type: ignore[arg-type]
    gateway.start()
    try:
        yield gateway
    finally:
        await gateway.aclose()


async def test_a_run_token_lists_only_that_runs_tools() -> None:
    with_kb = run_context(tools=[], knowledge_bases=[{"kb_id": "kb", "operations": ["retrieve"]}])
    with_tool = run_context(knowledge_bases=[], apis=[])
    async with (
        running(with_kb) as run_a,
        running(with_tool) as run_b,
        gateway_serving() as gateway,
    ):
        a = gateway.register_run(run_a.api, run_a.ctx)
        b = gateway.register_run(run_b.api, run_b.ctx)
        config = a.mcp_server()
        assert config.url == gateway.http_mcp_endpoint
        async with http_client(config.url, config.headers) as client:
            listed_a = tool_names(await client.list_tools())
            refused = await client.call_tool("langbot_call_tool", {"tool_name": "t"})
            # b's token as an argument does not widen a header-scoped caller
            borrowed = await client.call_tool(
                "langbot_call_tool", {"tool_name": "t", "run_token": b.token}
            )
        async with http_client(
            gateway.http_mcp_endpoint, {"Authorization": f"Bearer {b.token}"}
        ) as client:
            listed_b = tool_names(await client.list_tools())
            called = await client.call_tool("langbot_call_tool", {"tool_name": "t"})
    assert listed_a == {
        "langbot_list_assets",
        "langbot_get_current_event",
        "langbot_history_page",
        "langbot_retrieve_knowledge",
    }
    assert listed_b == {
        "langbot_list_assets",
        "langbot_get_current_event",
        "langbot_get_tool_detail",
        "langbot_call_tool",
    }
    assert errored(refused) is True
    assert errored(borrowed) is True
    assert structured(called) == {"echo": {}}
    assert run_a.peer.calls == []
    assert run_b.peer.actions() == ["call_tool"]


async def test_without_a_header_token_calls_name_their_run() -> None:
    async with running() as run, gateway_serving() as gateway:
        registration = gateway.register_run(run.api, run.ctx)
        async with http_client(gateway.http_mcp_endpoint) as client:
            catalogue = await client.list_tools()
            schemas = {
                t.name: getattr(t, "input_schema", None) or t.inputSchema for t in catalogue.tools
            }
            assert schemas["langbot_call_tool"]["properties"]["run_token"]["type"] == "string"
            anonymous = await client.call_tool("langbot_call_tool", {"tool_name": "t"})
            forged = await client.call_tool(
                "langbot_call_tool", {"tool_name": "t", "run_token": "forged"}
            )
            named = await client.call_tool(
                "langbot_call_tool", {"tool_name": "t", "run_token": registration.token}
            )
    assert errored(anonymous) is True
    assert text_of(anonymous).startswith("permission_denied.run_token:")
    assert errored(forged) is True
    assert structured(named) == {"echo": {}}
    assert run.peer.actions() == ["call_tool"]
    assert "run_token" not in run.peer.last("call_tool")["parameters"]


async def test_unknown_expired_and_revoked_tokens_are_refused() -> None:
    import httpx2

    listing = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    async with running() as run, gateway_serving() as gateway, httpx2.AsyncClient() as http:
        expiring = gateway.register_run(run.api, run.ctx, ttl_seconds=60)
        revoked = gateway.register_run(run.api, run.ctx)
        expiring.expires_at = 0.0  # its lifetime is over
        revoked.stop()
        for token in ("unknown", expiring.token, revoked.token):
            answer = await http.post(
                gateway.http_mcp_endpoint,
                json=listing,
                headers={"Authorization": f"Bearer {token}"},
            )
            assert answer.status_code == 401
        assert gateway.has_active_registrations() is False
    assert run.peer.calls == []


async def test_the_default_gateway_binds_loopback_and_is_shared() -> None:
    async with running() as run:
        gateway = get_default_agent_asset_gateway()
        try:
            assert gateway.host == "127.0.0.1"
            assert gateway.endpoint.startswith("http://127.0.0.1:")
            assert get_default_agent_asset_gateway(request_timeout=5.0) is gateway
            assert gateway.request_timeout == 5.0
            registration = gateway.register_run(run.api, run.ctx)
            # while a run is registered, other settings do not replace it
            assert get_default_agent_asset_gateway(server_name="other") is gateway
            registration.stop()
            replaced = get_default_agent_asset_gateway(server_name="other")
            assert replaced is not gateway
            assert replaced.server_name == "other"
        finally:
            await gateway.aclose()
            if asset_gateway._default_gateway is not None:
                await asset_gateway._default_gateway.aclose()
                asset_gateway._default_gateway = None
