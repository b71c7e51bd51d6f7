"""AgentRunMCPAccess: which server a harness gets, and cleaning up after it."""

from __future__ import annotations

import sys

import pytest

from langbot_plugin.api.agent_tools import AgentRunMCPAccess, AgentRunMCPBridge, asset_gateway
from langbot_plugin.api.agent_tools.asset_gateway import AgentAssetGatewayRegistration
from tests.api.agent_tools.helpers import http_client, running, tool_names

pytestmark = pytest.mark.anyio


async def test_local_harnesses_get_a_stdio_bridge() -> None:
    async with running() as run:
        access = AgentRunMCPAccess(run.api, run.ctx)
        async with access:
            assert isinstance(access.handle, AgentRunMCPBridge)
            config = access.server_config
            assert config is not None
            assert (config.name, config.transport, config.command) == (
                "langbot_agent",
                "stdio",
                sys.executable,
            )
            assert access.reverse_tunnel is None
        assert access.handle is None
        assert access.server_config is None


async def test_remote_ssh_harnesses_get_http_and_a_tunnel() -> None:
    async with (
        running() as run,
        AgentRunMCPAccess(run.api, run.ctx, location="remote-ssh") as access,
    ):
        config = access.server_config
        tunnel = access.reverse_tunnel
        assert config is not None
        assert tunnel is not None
        assert config.transport == "http"
        assert config.url.endswith("/mcp/http")
        assert (
            tunnel.local_port == tunnel.remote_port == int(config.url.split(":")[2].split("/")[0])
        )
        async with http_client(config.url, config.headers) as client:
            assert "langbot_call_tool" in tool_names(await client.list_tools())


async def test_a_public_url_needs_no_tunnel() -> None:
    async with (
        running() as run,
        AgentRunMCPAccess(
            run.api,
            run.ctx,
            location="remote-ssh",
            transport="http",
            bridge_public_url="https://bridge.example/mcp",
        ) as access,
    ):
        assert access.server_config is not None
        assert access.server_config.url == "https://bridge.example/mcp"
        assert access.reverse_tunnel is None


async def test_gateway_mode_registers_with_the_shared_gateway() -> None:
    async with running() as run:
        access = AgentRunMCPAccess(run.api, run.ctx, mode="gateway", gateway_token_ttl=30)
        try:
            access.start()
            registration = access.handle
            assert isinstance(registration, AgentAssetGatewayRegistration)
            config = access.server_config
            assert config is not None
            assert config.headers["Authorization"] == f"Bearer {registration.token}"
            async with http_client(config.url, config.headers) as client:
                assert "langbot_call_tool" in tool_names(await client.list_tools())
            access.stop()
            assert registration.gateway.registration_for(registration.token) is None
        finally:
            gateway = asset_gateway._default_gateway
            if gateway is not None:
                await gateway.aclose()
                asset_gateway._default_gateway = None


async def test_disabled_access_and_bad_settings() -> None:
    async with running() as run:
        disabled = AgentRunMCPAccess(run.api, run.ctx, enabled=False)
        disabled.start()
        assert disabled.handle is None
        assert disabled.server_config is None
        with pytest.raises(ValueError, match="mode"):
            AgentRunMCPAccess(run.api, run.ctx, mode="everything")
        with pytest.raises(ValueError, match="transport"):
            AgentRunMCPAccess(run.api, run.ctx, transport="smoke")
        custom = AgentRunMCPAccess(run.api, run.ctx, mode="gateway", tools=run.tools())
        with pytest.raises(ValueError, match="ephemeral"):
            custom.start()
