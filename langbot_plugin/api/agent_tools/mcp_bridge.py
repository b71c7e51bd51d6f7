"""A per-run MCP server on loopback for harnesses the runner starts itself.

:class:`AgentRunMCPBridge` serves one run's
:class:`~langbot_plugin.api.agent_tools.external_tools.AgentRunExternalTools` over
streamable HTTP (``/mcp`` and ``/mcp/http``); its token, address and stdio relay are
``docs/agent-runner.md``, "A harness you start yourself".
"""

from __future__ import annotations

import logging
import secrets
import sys
from collections.abc import Mapping
from typing import Any

from langbot_plugin.api.agent_tools._loopback import ServedOnLoopback
from langbot_plugin.api.agent_tools._server import (
    GateDecision,
    bearer_token,
    build_http_app,
    build_mcp_server,
    is_loopback,
    surface_from_scope,
    tokens_match,
)
from langbot_plugin.api.agent_tools.external_tools import AgentRunExternalTools
from langbot_plugin.api.agent_tools.mcp_config import AgentMCPServerConfig
from langbot_plugin.api.agent_tools.mcp_policy import (
    MCPBridgePolicy,
    MCPServerNotAllowedError,
    PolicyResolver,
    note_refusal,
)
from langbot_plugin.api.agent_tools.mcp_protocol import (
    AgentToolsMCPResolver,
    MCPMethodNotFoundError,
    answer_payload,
    handle_mcp_payload,
    handle_mcp_tool_method,
    jsonrpc_error,
)
from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.api.proxies.runner.api import RunnerAPIProxy

__all__ = [
    "LANGBOT_AGENT_MCP_SERVER_NAME",
    "MCP_SERVER_INFO",
    "MCP_STDIO_MODULE",
    "AgentRunMCPBridge",
    "MCPBridgePolicy",
    "MCPMethodNotFoundError",
    "RunnerAPIProxy",
    "RunnerContext",
    "handle_mcp_payload",
    "handle_mcp_tool_method",
    "jsonrpc_error",
    "merge_mcp_server_config",
]

logger = logging.getLogger(__name__)

#: The name harness configs know the LangBot server by.
LANGBOT_AGENT_MCP_SERVER_NAME = "langbot_agent"
#: ``serverInfo`` of the bridge.
MCP_SERVER_INFO = {"name": "langbot-agent", "version": "0.1.0"}
#: The module a stdio harness runs to reach a bridge.
MCP_STDIO_MODULE = "langbot_plugin.api.agent_tools.mcp_stdio"
TOKEN_HEADER = "X-LangBot-Agent-MCP-Token"


def merge_mcp_server_config(
    base_config: Mapping[str, Any] | None,
    server_config: dict[str, Any],
    *,
    server_name: str = LANGBOT_AGENT_MCP_SERVER_NAME,
) -> dict[str, Any]:
    """``base_config`` (a harness's MCP config) with ``server_config`` added under
    ``mcpServers[server_name]`` (a ``mcp_servers`` key is folded into it)."""
    data = dict(base_config or {})
    servers = data.pop("mcp_servers", None)
    servers = data.get("mcpServers") or servers or {}
    if not isinstance(servers, dict):
        raise ValueError("MCP config mcpServers must be an object")
    data["mcpServers"] = {**servers, server_name: server_config}
    return data


class AgentRunMCPBridge(ServedOnLoopback):
    """One run's LangBot tools as an MCP server on loopback, guarded by a run token.

    ``start()`` binds and serves (call it from async code); ``stop()`` shuts it down,
    ``await aclose()`` waits for that. ``async with`` does both.
    """

    _served_label = "LangBot MCP bridge"

    def __init__(
        self,
        tools: AgentRunExternalTools,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        request_timeout: float = 60.0,
        server_name: str = LANGBOT_AGENT_MCP_SERVER_NAME,
        policy: MCPBridgePolicy | None = None,
    ) -> None:
        self.tools = tools
        self.host = host
        self.port = port
        self.request_timeout = request_timeout
        self.server_name = server_name
        #: The servers a harness config may name and the dangerous tools (mcp_policy).
        self.policy = policy if policy is not None else MCPBridgePolicy()
        #: The secret a client must present; new for every bridge.
        self.token = secrets.token_urlsafe(32)
        self._surface = PolicyResolver(
            AgentToolsMCPResolver(tools), self.policy, api=tools.api, run_id=tools.ctx.run_id
        )

    @classmethod
    def from_run_api(
        cls,
        api: AgentRunAPIProxy,
        ctx: AgentRunContext,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        request_timeout: float = 60.0,
        server_name: str = LANGBOT_AGENT_MCP_SERVER_NAME,
        policy: MCPBridgePolicy | None = None,
    ) -> AgentRunMCPBridge:
        """A bridge for the built-in tools of the run."""
        return cls(
            AgentRunExternalTools(api, ctx),
            host=host,
            port=port,
            request_timeout=request_timeout,
            server_name=server_name,
            policy=policy,
        )

    # ------------------------------------------------------------------ serving

    def _server(self) -> Any:
        return build_mcp_server(
            surface_from_scope,
            name=MCP_SERVER_INFO["name"],
            version=MCP_SERVER_INFO["version"],
            call_timeout=self.request_timeout,
        )

    def _authorize(self, headers: Mapping[str, str]) -> GateDecision:
        if tokens_match(bearer_token(headers, TOKEN_HEADER), self.token):
            return self._surface
        return (401, "a valid LangBot run token is required")

    def start(self) -> None:
        """Bind and serve; the endpoint is usable when this returns."""
        if self._service is not None:
            return
        if not is_loopback(self.host):
            logger.warning("LangBot MCP bridge listens on %s (token protected)", self.host)
        app = build_http_app(self._server(), self._authorize, paths=("/mcp", "/mcp/http"))
        name = f"langbot-mcp-bridge-{self.tools.ctx.run_id}"
        self._serve(app, host=self.host, port=self.port, name=name)

    async def __aenter__(self) -> AgentRunMCPBridge:
        self.start()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    @property
    def http_mcp_endpoint(self) -> str:
        """The streamable-HTTP MCP URL."""
        return f"{self.endpoint}/mcp/http"

    # ------------------------------------------------------------------ configs

    def mcp_server(
        self, *, transport: str = "stdio", public_url: str | None = None
    ) -> AgentMCPServerConfig:
        """How a harness reaches this bridge: ``stdio`` (spawn the relay module) or
        ``http`` (``public_url`` or :attr:`http_mcp_endpoint`, token in headers)."""
        if transport == "http":
            return AgentMCPServerConfig.http(
                name=self.server_name,
                url=(public_url or self.http_mcp_endpoint).strip(),
                headers={"Authorization": f"Bearer {self.token}", TOKEN_HEADER: self.token},
            )
        if transport != "stdio":
            raise ValueError("MCP bridge transport must be stdio or http")
        return AgentMCPServerConfig.stdio(
            name=self.server_name,
            command=sys.executable,
            args=["-m", MCP_STDIO_MODULE],
            env={
                "LANGBOT_AGENT_MCP_ENDPOINT": self.endpoint,
                "LANGBOT_AGENT_MCP_TOKEN": self.token,
                "LANGBOT_AGENT_MCP_TIMEOUT": str(self.request_timeout),
            },
        )

    def mcp_server_config(self) -> dict[str, Any]:
        """The stdio config as a dict."""
        return self.mcp_server().to_dict()

    def http_mcp_server_config(
        self, *, public_url: str | None = None, transport: str = "http"
    ) -> dict[str, Any]:
        """The HTTP config as a dict (with ``type``)."""
        config = self.mcp_server(transport="http", public_url=public_url)
        if transport != "http":
            config = AgentMCPServerConfig.http(
                name=config.name, url=config.url, headers=config.headers, transport=transport
            )
        return config.to_dict(include_type=True)

    def merged_mcp_config(self, base_config: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """``base_config`` with this bridge's stdio server added; a server outside the
        policy's allowlist is refused (:class:`~.mcp_policy.MCPServerNotAllowedError`)."""
        merged = merge_mcp_server_config(
            base_config, self.mcp_server_config(), server_name=self.server_name
        )
        try:
            self.policy.check_servers(merged["mcpServers"], own=self.server_name)
        except MCPServerNotAllowedError as exc:
            note_refusal(self.tools.api, "mcp_server", ",".join(exc.details["servers"]), exc)
            raise
        return merged

    async def handle_http_mcp_request(self, payload: Any) -> Any:
        """Answer one JSON-RPC payload (or a batch) as the HTTP endpoint would (no token
        needed: the caller is in process); ``None`` when nothing is due."""
        return await answer_payload(self._server(), self._surface, payload)

    async def handle_mcp_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        """The ``result`` of one MCP request (``tools/list``, ``tools/call``) on this
        bridge's tools; a method the server does not serve raises ``ValueError``, any
        other JSON-RPC error :class:`~.mcp_protocol.MCPRequestError`."""
        try:
            return await handle_mcp_tool_method(method, params, self._surface)
        except MCPMethodNotFoundError as exc:
            raise ValueError(f"Unsupported MCP bridge method: {method}") from exc
