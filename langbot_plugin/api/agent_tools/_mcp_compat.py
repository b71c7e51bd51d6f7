"""The two lines of the ``mcp`` package we run on: 1.x (what LangBot 4.11 pins, ``>=1.25``)
and 2.x. Everything that differs between them is here, and only that:

* :func:`tool_server` -- a low-level ``Server`` with ``tools/list`` and ``tools/call``
  handlers taking the request context (2.x: ``on_list_tools``/``on_call_tool``
  constructor arguments; 1.x: the ``list_tools``/``call_tool`` decorators, with the
  context read from ``server.request_context`` and no input validation of its own);
* :func:`mcp_error` -- the exception a handler raises for a JSON-RPC error
  (2.x ``MCPError(code=, message=)``, 1.x ``McpError(ErrorData(...))``);
* :func:`handshake_versions` -- the protocol versions the line negotiates in
  ``initialize`` and the one it answers to a client asking for another (2.x:
  ``mcp.types.version``; 1.x: ``mcp.shared.version`` and ``mcp.types``);
* :func:`unknown_method` -- whether a request method is one the line has no request
  type for (2.x answers those ``-32601``; 1.x fails to parse them and answers
  ``-32602``);
* :func:`http_client_session` -- a client session to a streamable-HTTP server with
  fixed headers (2.x: ``Client`` over ``streamable_http_client`` with an ``httpx2``
  client; 1.x: ``ClientSession`` over its streamable-HTTP client with an ``httpx`` one).

The streamable-HTTP session manager, ``mcp.types`` and the stdio server transport are
the same on both lines. ``mcp`` is imported inside the functions: plugin workers import
the API at start-up and most never serve MCP.
"""

from __future__ import annotations

import datetime as dt
import importlib
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from functools import cache
from importlib import metadata
from typing import Any

__all__ = [
    "MCP_MAJOR",
    "handshake_versions",
    "http_client_session",
    "mcp_error",
    "tool_server",
    "unknown_method",
]


@cache
def _major() -> int:
    return int(metadata.version("mcp").split(".", 1)[0])


MCP_MAJOR: Callable[[], int] = _major

ListTools = Callable[[Any], Awaitable[Any]]
CallTool = Callable[[Any, str, dict[str, Any]], Awaitable[Any]]


def tool_server(
    name: str,
    *,
    version: str,
    instructions: str | None,
    list_tools: ListTools,
    call_tool: CallTool,
) -> Any:
    """A low-level server; ``list_tools(ctx)`` answers a ``ListToolsResult``,
    ``call_tool(ctx, name, arguments)`` a ``CallToolResult``."""
    from mcp.server.lowlevel.server import Server

    if _major() >= 2:

        async def on_list(ctx: Any, params: Any) -> Any:
            return await list_tools(ctx)

        async def on_call(ctx: Any, params: Any) -> Any:
            return await call_tool(ctx, params.name, dict(params.arguments or {}))

        return Server(
            name,
            version=version,
            instructions=instructions,
            on_list_tools=on_list,
            on_call_tool=on_call,
        )

    server: Any = Server(name, version=version, instructions=instructions)

    async def listed() -> Any:
        return (await list_tools(server.request_context)).tools

    async def called(tool: str, arguments: dict[str, Any]) -> Any:
        return await call_tool(server.request_context, tool, dict(arguments or {}))

    server.list_tools()(listed)
    server.call_tool(validate_input=False)(called)
    return server


def mcp_error(code: int, message: str) -> Exception:
    """The exception that makes the server answer a JSON-RPC error."""
    if _major() >= 2:
        from mcp import MCPError

        return MCPError(code=code, message=message)
    from mcp.types import ErrorData

    shared: Any = importlib.import_module("mcp.shared.exceptions")
    return shared.McpError(ErrorData(code=code, message=message))


def handshake_versions() -> tuple[tuple[str, ...], str]:
    """The versions ``initialize`` accepts from a client, and the server's answer to
    any other."""
    if _major() >= 2:
        version: Any = importlib.import_module("mcp.types.version")
        return tuple(version.HANDSHAKE_PROTOCOL_VERSIONS), str(version.LATEST_HANDSHAKE_VERSION)
    shared: Any = importlib.import_module("mcp.shared.version")
    types: Any = importlib.import_module("mcp.types")
    return tuple(shared.SUPPORTED_PROTOCOL_VERSIONS), str(types.LATEST_PROTOCOL_VERSION)


@cache
def _v1_request_methods() -> frozenset[str]:
    import typing

    types: Any = importlib.import_module("mcp.types")
    union = types.ClientRequest.model_fields["root"].annotation
    return frozenset(
        str(method)
        for model in typing.get_args(union)
        for method in typing.get_args(model.model_fields["method"].annotation)
    )


def unknown_method(method: str) -> bool:
    """Whether ``method`` is no client request the 1.x line knows (always ``False``
    on 2.x, whose server answers those itself with method-not-found)."""
    return _major() < 2 and method not in _v1_request_methods()


class _Session:
    """What the relay needs of a client session, on either line."""

    def __init__(self, session: Any) -> None:
        self._session = session

    async def list_tools(self) -> Any:
        return await self._session.list_tools()

    async def call_tool(self, name: str, arguments: dict[str, Any], timeout: float) -> Any:
        wait: Any = timeout if _major() >= 2 else dt.timedelta(seconds=timeout)
        return await self._session.call_tool(name, arguments, read_timeout_seconds=wait)


@asynccontextmanager
async def http_client_session(
    url: str, *, headers: Mapping[str, str], timeout: float
) -> AsyncGenerator[_Session]:
    """An initialized client session to the streamable-HTTP server at ``url``."""
    if _major() >= 2:
        import httpx2
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        http = httpx2.AsyncClient(headers=dict(headers), timeout=httpx2.Timeout(timeout))
        async with (
            http,
            Client(
                streamable_http_client(url, http_client=http),
                mode="legacy",
                read_timeout_seconds=timeout,
                cache=None,
            ) as client,
        ):
            yield _Session(client.session)
        return
    async with (
        _v1_streams(url, headers, timeout) as (read, write),
        _v1_session(read, write, timeout) as session,
    ):
        await session.initialize()
        yield _Session(session)


@asynccontextmanager
async def _v1_streams(
    url: str, headers: Mapping[str, str], timeout: float
) -> AsyncGenerator[tuple[Any, Any]]:
    """1.x streams: ``streamable_http_client`` with an ``httpx`` client where the line has
    it (1.2x later releases deprecate the older ``streamablehttp_client``)."""
    transport: Any = importlib.import_module("mcp.client.streamable_http")
    if hasattr(transport, "streamable_http_client"):
        import httpx

        http = httpx.AsyncClient(headers=dict(headers), timeout=httpx.Timeout(timeout))
        async with (
            http,
            transport.streamable_http_client(url, http_client=http) as (read, write, _),
        ):
            yield read, write
        return
    async with transport.streamablehttp_client(url, headers=dict(headers), timeout=timeout) as (
        read,
        write,
        _,
    ):
        yield read, write


def _v1_session(read: Any, write: Any, timeout: float) -> Any:
    session_class: Any = importlib.import_module("mcp").ClientSession
    return session_class(read, write, dt.timedelta(seconds=timeout))
