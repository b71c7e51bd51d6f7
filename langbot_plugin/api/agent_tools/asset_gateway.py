"""A long-lived MCP gateway shared by runs, for platforms that call back into LangBot.

Dify, Coze, n8n or Langflow workflows are configured once with the gateway's URL; each
run registers (:meth:`AgentAssetGateway.register_run`) and hands the workflow the
registration's short-lived token. How a request names its run, what ``tools/list``
shows with and without a token, and the HTTP refusals (401, 413) are in
``docs/agent-runner.md``, "Workflows that call back (the asset gateway)".
:meth:`AgentAssetGateway.handle_http_mcp_request` answers a payload in process, from
a thread other than the gateway's event loop (it blocks until answered). Tokens live
:data:`DEFAULT_RUN_TOKEN_TTL_SECONDS` unless the registration says otherwise.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TypeVar

import anyio
import anyio.from_thread
import anyio.lowlevel

from langbot_plugin.api.agent_tools._loopback import ServedOnLoopback
from langbot_plugin.api.agent_tools._server import (
    GateDecision,
    HTTPApp,
    bearer_token,
    build_http_app,
    build_mcp_server,
    is_loopback,
    surface_from_scope,
    tokens_match,
)
from langbot_plugin.api.agent_tools.external_tools import (
    AgentRunExternalTools,
    mcp_error_result,
)
from langbot_plugin.api.agent_tools.mcp_config import AgentMCPServerConfig
from langbot_plugin.api.agent_tools.mcp_protocol import (
    handle_mcp_payload_sync,
    jsonrpc_error,
    loop_is_blocked,
    mcp_tool_error,
)
from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
from langbot_plugin.api.proxies.runner.api import RunnerAPIProxy

__all__ = [
    "DEFAULT_RUN_TOKEN_TTL_SECONDS",
    "LANGBOT_AGENT_GATEWAY_INFO",
    "LANGBOT_AGENT_GATEWAY_INSTRUCTIONS",
    "LANGBOT_AGENT_GATEWAY_SERVER_NAME",
    "MAX_HTTP_MCP_BODY_BYTES",
    "AgentAssetGateway",
    "AgentAssetGatewayRegistration",
    "RunnerAPIProxy",
    "RunnerContext",
    "get_default_agent_asset_gateway",
    "handle_mcp_payload_sync",
    "jsonrpc_error",
    "mcp_tool_error",
]

logger = logging.getLogger(__name__)

LANGBOT_AGENT_GATEWAY_SERVER_NAME = "langbot_agent"
LANGBOT_AGENT_GATEWAY_INFO = {"name": "langbot-agent-gateway", "version": "0.1.0"}
LANGBOT_AGENT_GATEWAY_INSTRUCTIONS = (
    "Use langbot_list_assets to discover the LangBot assets this run may use. Calls are "
    "scoped to a run by the Authorization bearer token or by the run_token argument."
)
DEFAULT_RUN_TOKEN_TTL_SECONDS = 3600.0
#: The largest request body the gateway reads (larger ones get HTTP 413).
MAX_HTTP_MCP_BODY_BYTES = 1024 * 1024
_T = TypeVar("_T")
_TOKEN_HEADERS = ("X-LangBot-Agent-Gateway-Token", "X-LangBot-Agent-MCP-Token")


@dataclass
class AgentAssetGatewayRegistration:
    """One run's registration in a gateway; :attr:`token` names the run."""

    gateway: AgentAssetGateway
    token: str
    tools: AgentRunExternalTools
    #: The event loop the run's calls go to (the reference's field; ``None`` when the run
    #: was admitted outside one).
    loop: asyncio.AbstractEventLoop | None
    expires_at: float

    @property
    def server_name(self) -> str:
        return self.gateway.server_name

    @property
    def endpoint(self) -> str:
        return self.gateway.endpoint

    @property
    def http_mcp_endpoint(self) -> str:
        return self.gateway.http_mcp_endpoint

    @property
    def expired(self) -> bool:
        """Whether the token's lifetime is over."""
        return time.monotonic() >= self.expires_at

    def mcp_server(
        self,
        *,
        public_url: str | None = None,
        transport: str = "http",
        include_token_header: bool = True,
    ) -> AgentMCPServerConfig:
        """How a harness reaches the gateway as this run."""
        headers = (
            {"Authorization": f"Bearer {self.token}", _TOKEN_HEADERS[0]: self.token}
            if include_token_header
            else {}
        )
        return AgentMCPServerConfig.http(
            name=self.server_name,
            url=(public_url or self.http_mcp_endpoint).strip(),
            headers=headers,
            transport=transport,
        )

    def http_mcp_server_config(
        self,
        *,
        public_url: str | None = None,
        transport: str = "http",
        include_token_header: bool = True,
    ) -> dict[str, Any]:
        """:meth:`mcp_server` as a dict (with ``type``)."""
        return self.mcp_server(
            public_url=public_url, transport=transport, include_token_header=include_token_header
        ).to_dict(include_type=True)

    def stop(self) -> None:
        """Revoke the token."""
        self.gateway.unregister_run(self.token)


def _run_token_required() -> dict[str, Any]:
    return mcp_error_result(
        "A valid LangBot run_token is required", code="permission_denied.run_token"
    )


class _RunSurface:
    """A caller identified by a header token: that run's tools only."""

    def __init__(self, registration: AgentAssetGatewayRegistration) -> None:
        self._registration = registration

    def listed(self) -> list[dict[str, Any]]:
        return self._registration.tools.mcp_tools()

    async def list_tools(self) -> list[dict[str, Any]]:
        return self.listed()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        arguments.pop("run_token", None)
        return await self._registration.tools.call_mcp_tool(name, arguments)


class _TokenArgumentSurface:
    """A caller without a header token: the catalogue; calls name their run."""

    def __init__(self, gateway: AgentAssetGateway) -> None:
        self._gateway = gateway

    def listed(self) -> list[dict[str, Any]]:
        return AgentRunExternalTools.all_mcp_tools(include_run_token=True)

    async def list_tools(self) -> list[dict[str, Any]]:
        return self.listed()

    def registration(self, arguments: dict[str, Any]) -> AgentAssetGatewayRegistration | None:
        """The live registration the call's ``run_token`` argument names (taken out of
        ``arguments``)."""
        token = str(arguments.pop("run_token", "") or "").strip()
        return self._gateway.registration_for(token)

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        registration = self.registration(arguments)
        if registration is None:
            return _run_token_required()
        return await registration.tools.call_mcp_tool(name, arguments)


class _OnGatewayLoop:
    """A surface of the gateway as a blocking resolver: each call runs on the event
    loop the gateway serves on (where the runs' API sessions live), within the
    gateway's request timeout."""

    def __init__(
        self, gateway: AgentAssetGateway, surface: _RunSurface | _TokenArgumentSurface
    ) -> None:
        self._gateway = gateway
        self._surface = surface

    def _on_loop(self, call: Callable[[], Awaitable[_T]]) -> _T:
        token = self._gateway._loop_token  # pyright: ignore[reportPrivateUsage]
        if token is None or not self._gateway.started:
            raise RuntimeError("the LangBot asset gateway is not started")
        if loop_is_blocked(self._gateway._loop):  # pyright: ignore[reportPrivateUsage]
            raise RuntimeError(
                "handle_http_mcp_request was called on the gateway's own event loop, which "
                "runs the tools: await handle_mcp_payload there instead"
            )

        async def bounded() -> _T:
            with anyio.fail_after(self._gateway.request_timeout):
                return await call()

        return anyio.from_thread.run(bounded, token=token)

    def list_tools(self) -> list[dict[str, Any]]:
        return self._surface.listed()  # what a surface lists needs no loop

    def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        surface = self._surface
        arguments = dict(arguments)
        if isinstance(surface, _TokenArgumentSurface):  # the token is checked off the loop
            registration = surface.registration(arguments)
            if registration is None:
                return _run_token_required()
            surface = _RunSurface(registration)
        try:
            return self._on_loop(lambda: surface.call_tool(name, arguments))
        except TimeoutError:
            message = f"{name} did not answer within {self._gateway.request_timeout} s"
            return mcp_error_result(message, code="deadline_exceeded")
        except RuntimeError as exc:
            return mcp_error_result(str(exc), code="runtime_error")


@dataclass(eq=False, repr=False, kw_only=True)
class AgentAssetGateway(ServedOnLoopback):
    """A process-long MCP server on HTTP whose callers are scoped by run tokens.

    ``start()``, ``stop()`` and ``register_run()`` are synchronous; call them from
    async code (the gateway serves on the running event loop).
    """

    _served_label = "LangBot asset gateway"

    host: str = "127.0.0.1"
    port: int = 0
    request_timeout: float = 60.0
    server_name: str = LANGBOT_AGENT_GATEWAY_SERVER_NAME
    _registrations: dict[str, AgentAssetGatewayRegistration] = field(
        default_factory=dict[str, AgentAssetGatewayRegistration], init=False
    )
    _http_app: HTTPApp | None = field(default=None, init=False)
    _loop_token: anyio.lowlevel.EventLoopToken | None = field(default=None, init=False)
    _loop: asyncio.AbstractEventLoop | None = field(default=None, init=False)

    # ------------------------------------------------------------------ serving

    @property
    def started(self) -> bool:
        """Whether the gateway serves (on whichever event loop started it)."""
        return self._service is not None

    @property
    def active_handler_count(self) -> int:
        """HTTP requests the gateway is answering now."""
        return self._http_app.requests_in_flight if self._http_app is not None else 0

    @property
    def running(self) -> bool:
        """Whether the gateway serves on the current event loop."""
        return self._service is not None and self._service.running

    def start(self) -> None:
        """Bind and serve (again, if a previous event loop that served it is gone)."""
        if self._service is not None and self._service.running:
            return
        self._service = None
        if not is_loopback(self.host):
            logger.warning(
                "LangBot asset gateway listens on %s:%s; every call needs a run token",
                self.host,
                self.port,
            )
        server = build_mcp_server(
            surface_from_scope,
            name=LANGBOT_AGENT_GATEWAY_INFO["name"],
            version=LANGBOT_AGENT_GATEWAY_INFO["version"],
            instructions=LANGBOT_AGENT_GATEWAY_INSTRUCTIONS,
            call_timeout=lambda: self.request_timeout,
        )
        app = build_http_app(
            server,
            self._authorize,
            paths=("/mcp", "/mcp/http"),
            max_body_bytes=MAX_HTTP_MCP_BODY_BYTES,
        )
        self._serve(app, host=self.host, port=self.port, name="langbot-asset-gateway")
        self._http_app = app
        self._loop_token = anyio.lowlevel.current_token()
        self._loop = asyncio.get_running_loop()

    def stop(self) -> None:
        """Stop serving and drop every registration."""
        self._registrations.clear()
        super().stop()

    async def aclose(self) -> None:
        """Stop, drop every registration, and wait until the socket is closed."""
        self._registrations.clear()
        await super().aclose()

    @property
    def http_mcp_endpoint(self) -> str:
        """The streamable-HTTP MCP URL."""
        return f"{self.endpoint}/mcp"

    # ------------------------------------------------------------------ runs

    def register_run(
        self,
        api: AgentRunAPIProxy,
        ctx: AgentRunContext,
        *,
        token: str | None = None,
        ttl_seconds: float = DEFAULT_RUN_TOKEN_TTL_SECONDS,
    ) -> AgentAssetGatewayRegistration:
        """Admit a run (starting the gateway if needed); the returned registration's
        token is valid for ``ttl_seconds`` (at least one) or until ``stop()``."""
        self.start()
        registration = AgentAssetGatewayRegistration(
            gateway=self,
            token=token or secrets.token_urlsafe(32),
            tools=AgentRunExternalTools(api, ctx),
            loop=asyncio.get_running_loop(),  # start() needs one, so there is one
            expires_at=time.monotonic() + max(1.0, ttl_seconds),
        )
        self._registrations[registration.token] = registration
        return registration

    def unregister_run(self, token: str) -> None:
        """Revoke a run token."""
        self._registrations.pop(token, None)

    def _drop_expired(self) -> None:
        for token in [t for t, r in self._registrations.items() if r.expired]:
            del self._registrations[token]

    def has_active_registrations(self) -> bool:
        """Whether some run token is still valid."""
        self._drop_expired()
        return bool(self._registrations)

    def registration_for(self, token: str) -> AgentAssetGatewayRegistration | None:
        """The live registration a token names, if any."""
        if not token:
            return None
        self._drop_expired()
        for known, registration in self._registrations.items():
            if tokens_match(token, known):
                return registration
        return None

    def matches_config(self, *, host: str, port: int, server_name: str) -> bool:
        """Whether this gateway was made with these settings."""
        return (self.host, self.port, self.server_name) == (host, port, server_name)

    def handle_http_mcp_request(self, payload: Any, *, header_token: str = "") -> Any:
        """Answer a JSON-RPC payload (or batch) as ``POST /mcp`` does for a request
        whose header token is ``header_token``; ``None`` when nothing is due.

        It blocks until answered; tool calls run on the gateway's event loop, so called
        on that loop a tool call answers an error result (a listing, a refusal of the
        token, and what needs no tool still answer). An unknown or expired
        ``header_token`` gets a JSON-RPC error (over HTTP: 401)."""
        decision = self._surface_for(header_token.strip())
        if isinstance(decision, tuple):
            from mcp.types import INVALID_REQUEST

            message_id = payload.get("id") if isinstance(payload, dict) else None
            return jsonrpc_error(message_id, INVALID_REQUEST, decision[1])
        return handle_mcp_payload_sync(
            payload,
            _OnGatewayLoop(self, decision),
            server_info=LANGBOT_AGENT_GATEWAY_INFO,
            instructions=LANGBOT_AGENT_GATEWAY_INSTRUCTIONS,
        )

    def _authorize(self, headers: Mapping[str, str]) -> GateDecision:
        return self._surface_for(bearer_token(headers, *_TOKEN_HEADERS))

    def _surface_for(self, token: str) -> _RunSurface | _TokenArgumentSurface | tuple[int, str]:
        if not token:
            return _TokenArgumentSurface(self)
        registration = self.registration_for(token)
        if registration is None:
            return (401, "unknown or expired LangBot run token")
        return _RunSurface(registration)


_default_gateway: AgentAssetGateway | None = None


def get_default_agent_asset_gateway(
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    request_timeout: float = 60.0,
    server_name: str = LANGBOT_AGENT_GATEWAY_SERVER_NAME,
) -> AgentAssetGateway:
    """The process's shared gateway, started.

    Asked for other settings while no run is registered, it is replaced by a new one
    with those settings; while runs are registered, the running one is kept (only its
    request timeout follows the latest call).
    """
    global _default_gateway
    gateway = _default_gateway
    if (
        gateway is not None
        and not gateway.matches_config(host=host, port=port, server_name=server_name)
        and not gateway.has_active_registrations()
    ):
        gateway.stop()
        gateway = None
    if gateway is None:
        gateway = AgentAssetGateway(
            host=host, port=port, request_timeout=request_timeout, server_name=server_name
        )
        _default_gateway = gateway
    else:
        gateway.request_timeout = request_timeout
    gateway.start()
    return gateway
