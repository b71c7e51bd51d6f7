"""``python -m langbot_plugin.api.agent_tools.mcp_stdio``: an MCP stdio server that
relays to a run's HTTP bridge.

For harnesses that only spawn stdio servers. Configured by the environment the
bridge's stdio config sets:

* ``LANGBOT_AGENT_MCP_ENDPOINT`` -- the bridge, ``http://127.0.0.1:<port>`` (an URL
  already ending in ``/mcp`` or ``/mcp/http`` is used as it is);
* ``LANGBOT_AGENT_MCP_TOKEN`` -- the bridge's run token;
* ``LANGBOT_AGENT_MCP_TIMEOUT`` -- seconds to wait for one answer (default 60).

Both sides are the ``mcp`` package: a client session to the bridge, a low-level
server on stdio whose ``tools/list`` and ``tools/call`` forward to it. Exits 2 when
the environment is incomplete and 1 when the bridge refuses or cannot be reached.

:func:`handle_message` answers one message the same way without stdio (the
reference's entry point for callers that read the lines themselves).
"""

from __future__ import annotations

import os
import sys
from contextlib import AbstractAsyncContextManager
from typing import Any

import anyio

__all__ = ["SERVER_INFO", "bridge_url", "handle_message", "main", "relay"]

#: ``serverInfo`` of the relay (the bridge's own).
SERVER_INFO = {"name": "langbot-agent", "version": "0.1.0"}


def bridge_url(endpoint: str) -> str:
    """The streamable-HTTP URL of a bridge endpoint."""
    endpoint = endpoint.rstrip("/")
    if endpoint.endswith(("/mcp", "/mcp/http")):
        return endpoint
    return f"{endpoint}/mcp"


class _Upstream:
    """The bridge seen as a tool surface."""

    def __init__(self, session: Any, timeout: float) -> None:
        self._session = session
        self._timeout = timeout

    async def list_tools(self) -> list[dict[str, Any]]:
        listed = await self._session.list_tools()
        return [t.model_dump(by_alias=True, mode="json", exclude_none=True) for t in listed.tools]

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        result = await self._session.call_tool(name, arguments, self._timeout)
        data = result.model_dump(by_alias=True, mode="json", exclude_none=True)
        return {k: v for k, v in data.items() if k in ("content", "structuredContent", "isError")}


class _UpstreamPerCall:
    """The bridge as a tool surface, with a client session opened for each call (so a
    message that needs no tool, ``initialize`` or ``ping``, never reaches it)."""

    def __init__(self, endpoint: str, token: str, timeout: float) -> None:
        self._url = bridge_url(endpoint)
        self._headers = {"Authorization": f"Bearer {token}"}
        self._timeout = timeout

    def _open(self) -> AbstractAsyncContextManager[Any]:
        from langbot_plugin.api.agent_tools._mcp_compat import http_client_session

        return http_client_session(self._url, headers=self._headers, timeout=self._timeout)

    async def list_tools(self) -> list[dict[str, Any]]:
        async with self._open() as up:
            return await _Upstream(up, self._timeout).list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        async with self._open() as up:
            return await _Upstream(up, self._timeout).call_tool(name, arguments)


def handle_message(
    message: Any, *, endpoint: str, token: str, timeout: float
) -> dict[str, Any] | None:
    """The relay's answer to one JSON-RPC ``message`` (``None`` for a notification),
    tool requests forwarded to the bridge at ``endpoint`` with ``token``; blocks until
    answered (call it from a thread without an event loop)."""
    from langbot_plugin.api.agent_tools.mcp_protocol import handle_mcp_message

    upstream = _UpstreamPerCall(endpoint, token, timeout)
    return anyio.run(lambda: handle_mcp_message(message, upstream, server_info=SERVER_INFO))


async def relay(endpoint: str, token: str, timeout: float) -> None:
    """Serve MCP on stdin/stdout, forwarding tool requests to the bridge."""
    from mcp.server.stdio import stdio_server

    from langbot_plugin.api.agent_tools._mcp_compat import http_client_session
    from langbot_plugin.api.agent_tools._server import build_mcp_server

    headers = {"Authorization": f"Bearer {token}"}
    async with http_client_session(bridge_url(endpoint), headers=headers, timeout=timeout) as up:
        surface = _Upstream(up, timeout)
        server = build_mcp_server(
            lambda _ctx: surface,
            name=SERVER_INFO["name"],
            version=SERVER_INFO["version"],
        )
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())


def _leaves(exc: BaseException) -> list[BaseException]:
    if isinstance(exc, BaseExceptionGroup):
        return [leaf for inner in exc.exceptions for leaf in _leaves(inner)]  # pyright: ignore[reportUnknownVariableType]
    return [exc]


def main() -> int:
    """Run the relay with the environment's settings."""
    endpoint = os.environ.get("LANGBOT_AGENT_MCP_ENDPOINT", "").strip()
    token = os.environ.get("LANGBOT_AGENT_MCP_TOKEN", "").strip()
    try:
        timeout = float(os.environ.get("LANGBOT_AGENT_MCP_TIMEOUT") or 60.0)
    except ValueError:
        timeout = 60.0
    if not endpoint or not token:
        sys.stderr.write("LANGBOT_AGENT_MCP_ENDPOINT and LANGBOT_AGENT_MCP_TOKEN are required\n")
        return 2
    try:
        anyio.run(relay, endpoint, token, timeout)
    except KeyboardInterrupt:
        return 0
    except Exception as exc:  # the harness shows our stderr; say why, not a traceback
        reasons = "; ".join(repr(leaf) for leaf in _leaves(exc))
        sys.stderr.write(f"LangBot MCP relay to {endpoint} failed: {reasons}\n")
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
