"""One object a runner uses to give its harness the run's LangBot tools.

:class:`AgentRunMCPAccess` picks how the harness reaches them and cleans up after:

========== ============ =====================================================
mode       transport    what the harness gets
========== ============ =====================================================
ephemeral  stdio        a per-run bridge, reached through the stdio relay
ephemeral  http         the per-run bridge's URL and token headers
gateway    (http)       a registration in the shared asset gateway
========== ============ =====================================================

``mode="auto"`` is ``ephemeral``; ``transport="auto"`` is ``http`` for
``location="remote-ssh"`` (with an ``ssh -R`` tunnel to the local port unless a
public URL is configured) and ``stdio`` otherwise.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from langbot_plugin.api.agent_tools.asset_gateway import (
    AgentAssetGatewayRegistration,
    get_default_agent_asset_gateway,
)
from langbot_plugin.api.agent_tools.external_tools import AgentRunExternalTools
from langbot_plugin.api.agent_tools.mcp_bridge import AgentRunMCPBridge
from langbot_plugin.api.agent_tools.mcp_config import (
    AgentMCPReverseTunnel,
    AgentMCPServerConfig,
    reverse_tunnel_for_mcp_server,
)
from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.api.proxies.runner.api import RunnerAPIProxy

__all__ = [
    "AgentRunMCPAccess",
    "RunnerAPIProxy",
    "RunnerContext",
]

MODES = ("auto", "ephemeral", "gateway")
TRANSPORTS = ("auto", "stdio", "http")


@dataclass(eq=False, repr=False)
class AgentRunMCPAccess:
    """A run's LangBot MCP server for a harness: a bridge or a gateway registration.

    ``start()`` and ``stop()`` are synchronous (call them from async code); the
    context managers (``with`` and ``async with``) call them, ``async with`` also
    waiting for a bridge's socket to close.
    """

    api: AgentRunAPIProxy
    ctx: AgentRunContext
    _: KW_ONLY
    enabled: bool = True
    location: str = "local"
    mode: str = "auto"
    transport: str = "auto"
    bridge_host: str = "127.0.0.1"
    bridge_port: int = 0
    bridge_public_url: str = ""
    bridge_request_timeout: float = 60.0
    gateway_host: str = "127.0.0.1"
    gateway_port: int = 0
    gateway_public_url: str = ""
    gateway_request_timeout: float = 60.0
    gateway_token_ttl: float = 3600.0
    tools: AgentRunExternalTools | None = None
    _handle: AgentRunMCPBridge | AgentAssetGatewayRegistration | None = field(
        default=None, init=False
    )
    _server_config: AgentMCPServerConfig | None = field(default=None, init=False)
    _reverse_tunnel: AgentMCPReverseTunnel | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"MCP access mode must be one of {MODES}, not {self.mode!r}")
        if self.transport not in TRANSPORTS:
            raise ValueError(f"MCP transport must be one of {TRANSPORTS}, not {self.transport!r}")
        self.mode = "ephemeral" if self.mode == "auto" else self.mode

    @property
    def handle(self) -> AgentRunMCPBridge | AgentAssetGatewayRegistration | None:
        """The running bridge or the gateway registration (``None`` until started)."""
        return self._handle

    @property
    def server_config(self) -> AgentMCPServerConfig | None:
        """What to put in the harness's MCP configuration."""
        return self._server_config

    @property
    def reverse_tunnel(self) -> AgentMCPReverseTunnel | None:
        """The ``ssh -R`` forward a remote harness needs, if any."""
        return self._reverse_tunnel

    def start(self) -> None:
        """Start the bridge or register with the gateway (once)."""
        if not self.enabled or self._handle is not None:
            return
        if self.mode == "gateway":
            self._start_gateway()
        else:
            self._start_bridge()

    def _start_gateway(self) -> None:
        if self.tools is not None:
            raise ValueError("custom AgentRunExternalTools need mode='ephemeral'")
        gateway = get_default_agent_asset_gateway(
            host=self.gateway_host,
            port=self.gateway_port,
            request_timeout=self.gateway_request_timeout,
        )
        registration = gateway.register_run(self.api, self.ctx, ttl_seconds=self.gateway_token_ttl)
        public_url = self.gateway_public_url
        if not public_url and self.location == "remote-ssh":
            public_url = registration.http_mcp_endpoint
        self._handle = registration
        self._server_config = registration.mcp_server(public_url=public_url or None)
        self._reverse_tunnel = self._tunnel(self.gateway_public_url)

    def _start_bridge(self) -> None:
        transport = self.transport
        if transport == "auto":
            transport = "http" if self.location == "remote-ssh" else "stdio"
        tools = self.tools if self.tools is not None else AgentRunExternalTools(self.api, self.ctx)
        bridge = AgentRunMCPBridge(
            tools,
            host=self.bridge_host,
            port=self.bridge_port,
            request_timeout=self.bridge_request_timeout,
        )
        bridge.start()
        public_url = self.bridge_public_url
        if not public_url and self.location == "remote-ssh" and transport == "http":
            public_url = bridge.http_mcp_endpoint
        self._handle = bridge
        self._server_config = bridge.mcp_server(transport=transport, public_url=public_url or None)
        self._reverse_tunnel = self._tunnel(self.bridge_public_url)

    def _tunnel(self, configured_public_url: str) -> AgentMCPReverseTunnel | None:
        config = self._server_config
        if self.location != "remote-ssh" or configured_public_url:
            return None
        if config is None or config.transport != "http":
            return None
        return reverse_tunnel_for_mcp_server(config)

    def _detach(self) -> AgentRunMCPBridge | AgentAssetGatewayRegistration | None:
        handle, self._handle = self._handle, None
        self._server_config = None
        self._reverse_tunnel = None
        return handle

    def stop(self) -> None:
        """Stop the bridge or revoke the registration."""
        handle = self._detach()
        if handle is not None:
            handle.stop()

    async def aclose(self) -> None:
        """:meth:`stop`, waiting for a bridge's socket to close."""
        handle = self._detach()
        if isinstance(handle, AgentRunMCPBridge):
            await handle.aclose()
        elif handle is not None:
            handle.stop()

    def __enter__(self) -> AgentRunMCPAccess:
        self.start()
        return self

    def __exit__(self, *exc_info: Any) -> None:
        self.stop()

    async def __aenter__(self) -> AgentRunMCPAccess:
        self.start()
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        await self.aclose()
