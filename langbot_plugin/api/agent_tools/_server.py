"""MCP serving shared by the bridge, the gateway, the stdio relay and the daemon hub.

Everything MCP is the official ``mcp`` package: a low-level ``Server`` whose
``tools/list`` and ``tools/call`` handlers ask a :class:`ToolSurface`, and its
streamable-HTTP session manager (stateless, JSON answers) as the ASGI app.

* :func:`build_mcp_server` -- the ``Server`` for a surface chosen per request;
* :func:`build_http_app` -- that server over HTTP behind a token gate, plus ``/healthz``
  (a plain JSON-RPC POST is served too, :mod:`._plain_jsonrpc`);
* :func:`answer_in_process` -- one JSON-RPC payload through the same server without a
  socket (the daemon hub answers relayed requests this way).

``mcp`` and ``starlette`` are imported inside functions: plugin workers
import the API at start-up and most never serve MCP.
"""

from __future__ import annotations

import hmac
import json
import logging
import math
from collections.abc import Callable, Iterable, Mapping
from contextlib import AbstractAsyncContextManager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import anyio

from langbot_plugin.api.agent_tools._plain_jsonrpc import (
    PlainJSONRPC,
    complete_initialize,
    read_body,
    replaying,
)
from langbot_plugin.rpc.loopback import is_loopback

if TYPE_CHECKING:
    from mcp.server.lowlevel.server import Server
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
    from starlette.types import ASGIApp, Receive, Scope, Send

__all__ = [
    "SURFACE_SCOPE_KEY",
    "Authorize",
    "GateDecision",
    "HTTPAnswer",
    "HTTPApp",
    "ToolSurface",
    "answer_in_process",
    "bearer_token",
    "build_http_app",
    "build_mcp_server",
    "is_loopback",
    "surface_from_scope",
    "tokens_match",
]

logger = logging.getLogger(__name__)

#: Where the token gate leaves the caller's surface in the ASGI scope.
SURFACE_SCOPE_KEY = "langbot.mcp_surface"
_JSON = [(b"content-type", b"application/json")]


class ToolSurface(Protocol):
    """The tools one caller may see and call (MCP wire dicts in and out)."""

    async def list_tools(self) -> list[dict[str, Any]]: ...

    async def call_tool(self, name: str, arguments: dict[str, Any]) -> dict[str, Any]: ...


#: What a gate decides for a request: the caller's surface, or (status, message).
GateDecision = ToolSurface | tuple[int, str]
Authorize = Callable[[Mapping[str, str]], GateDecision]


def tokens_match(given: str, expected: str) -> bool:
    """Constant-time token comparison; an empty token never matches."""
    return bool(given) and bool(expected) and hmac.compare_digest(given, expected)


def bearer_token(headers: Mapping[str, str], *fallback_headers: str) -> str:
    """The bearer token of ``Authorization``, else the first fallback header set."""
    authorization = headers.get("authorization", "").strip()
    if authorization[:7].lower() == "bearer ":
        return authorization[7:].strip()
    for name in fallback_headers:
        value = headers.get(name.lower(), "").strip()
        if value:
            return value
    return ""


def build_mcp_server(
    surface_for: Callable[[Any], ToolSurface],
    *,
    name: str,
    version: str = "0.1.0",
    instructions: str | None = None,
    call_timeout: float | Callable[[], float] | None = None,
) -> Server[Any]:
    """A low-level MCP server with ``tools/list`` and ``tools/call``.

    ``surface_for(ctx)`` picks the caller's surface (``ctx`` is the handler context;
    over HTTP ``ctx.request.scope`` holds what the token gate chose). A call running
    past ``call_timeout`` seconds (a number, or a function read at each call) ends as
    an ``isError`` result.
    """
    from mcp import types

    from langbot_plugin.api.agent_tools._mcp_compat import tool_server

    async def list_tools(ctx: Any) -> types.ListToolsResult:
        tools = await surface_for(ctx).list_tools()
        return types.ListToolsResult(tools=[types.Tool.model_validate(t) for t in tools])

    async def call_tool(ctx: Any, name: str, arguments: dict[str, Any]) -> types.CallToolResult:
        surface = surface_for(ctx)
        limit = call_timeout() if callable(call_timeout) else call_timeout
        result: dict[str, Any] | None = None
        with anyio.move_on_after(limit if limit else math.inf):
            result = await surface.call_tool(name, arguments)
        if result is None:
            message = f"{name} did not answer within {limit} s"
            result = {
                "isError": True,
                "content": [{"type": "text", "text": f"deadline_exceeded: {message}"}],
                "structuredContent": {"error": {"code": "deadline_exceeded", "message": message}},
            }
        return types.CallToolResult.model_validate(result)

    return tool_server(
        name,
        version=version,
        instructions=instructions,
        list_tools=list_tools,
        call_tool=call_tool,
    )


def surface_from_scope(ctx: Any) -> ToolSurface:
    """The surface the token gate stored for the request of handler context ``ctx``."""
    request = getattr(ctx, "request", None)
    scope: Mapping[str, Any] = getattr(request, "scope", None) or {}
    surface = scope.get(SURFACE_SCOPE_KEY)
    if surface is None:
        from langbot_plugin.api.agent_tools._mcp_compat import mcp_error

        raise mcp_error(-32603, "no tool surface for this request")
    return surface


def _session_manager(server: Server[Any]) -> StreamableHTTPSessionManager:
    from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

    # Stateless with JSON answers: every POST stands alone, so relays need not carry
    # session ids, and no server-to-client stream is kept open.
    return StreamableHTTPSessionManager(app=server, json_response=True, stateless=True)


async def _reply(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class _TokenGate:
    """ASGI wrapper: asks ``authorize`` about each request; refusals get a JSON 401/403,
    accepted requests reach the MCP app with their surface in the scope."""

    def __init__(self, authorize: Authorize, app: ASGIApp) -> None:
        self._authorize = authorize
        self._app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        decision = self._authorize(headers)
        if isinstance(decision, tuple):
            status, message = decision
            body = json.dumps({"ok": False, "error": message}).encode()
            await _reply(send, status, body, [*_JSON, (b"www-authenticate", b"Bearer")])
            return
        scope[SURFACE_SCOPE_KEY] = decision
        await self._app(scope, receive, send)


class _RequestGuard:
    """ASGI wrapper: counts the HTTP requests in flight and, given a limit, reads each
    body first and answers 413 (closing the connection) when it is larger."""

    def __init__(self, app: ASGIApp, max_body_bytes: int | None) -> None:
        self._app = app
        self._max = max_body_bytes
        self.in_flight = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self._app(scope, receive, send)
            return
        self.in_flight += 1
        try:
            if self._max is None:
                await self._app(scope, receive, send)
                return
            body = await self._bounded_body(scope, receive, send, self._max)
            if body is None:
                return
            await self._app(scope, replaying(body, receive), send)
        finally:
            self.in_flight -= 1

    @staticmethod
    async def _bounded_body(scope: Scope, receive: Receive, send: Send, limit: int) -> bytes | None:
        declared = dict(scope["headers"]).get(b"content-length")
        if declared is not None and (not declared.isdigit() or int(declared) > limit):
            status = 413 if declared.isdigit() else 400
            await _refuse_body(send, status, limit)
            return None
        body = await read_body(receive, limit)
        if body is not None and len(body) > limit:
            await _refuse_body(send, 413, limit)
            return None
        return body


async def _refuse_body(send: Send, status: int, limit: int) -> None:
    error = f"request body over {limit} bytes" if status == 413 else "invalid Content-Length"
    body = json.dumps({"ok": False, "error": error}).encode()
    await _reply(send, status, body, [*_JSON, (b"connection", b"close")])


@dataclass
class HTTPApp:
    """An ASGI app and the context manager that must be open while it serves."""

    app: ASGIApp
    lifespan: Callable[[], AbstractAsyncContextManager[None]]
    guard: _RequestGuard | None = None

    @property
    def requests_in_flight(self) -> int:
        """HTTP requests being answered now."""
        return self.guard.in_flight if self.guard is not None else 0


def build_http_app(
    server: Server[Any],
    authorize: Authorize,
    *,
    paths: Iterable[str] = ("/mcp",),
    max_body_bytes: int | None = None,
) -> HTTPApp:
    """``server`` over streamable HTTP at each of ``paths`` behind ``authorize``, and
    ``GET /healthz``; a body over ``max_body_bytes`` gets 413. (No DNS-rebinding host
    check: every request must present a secret token, which a rebinding page does not
    have.)"""
    from starlette.applications import Starlette
    from starlette.requests import Request
    from starlette.responses import JSONResponse
    from starlette.routing import Route

    manager = _session_manager(server)
    gate = _TokenGate(authorize, PlainJSONRPC(manager.handle_request))

    async def healthz(request: Request) -> JSONResponse:
        return JSONResponse({"ok": True})

    routes = [Route(path, endpoint=gate) for path in paths]
    routes.append(Route("/healthz", endpoint=healthz, methods=["GET"]))
    guard = _RequestGuard(Starlette(routes=routes), max_body_bytes)
    return HTTPApp(app=guard, lifespan=manager.run, guard=guard)


@dataclass
class HTTPAnswer:
    """What an in-process request got back."""

    status: int
    content_type: str
    body: bytes

    def json(self) -> Any:
        """The body as JSON (``None`` when empty)."""
        return json.loads(self.body) if self.body else None


async def _call_asgi(
    app: ASGIApp, scope: dict[str, Any], body: bytes
) -> tuple[int, dict[str, str], bytes]:
    status = 500
    headers: dict[str, str] = {}
    chunks: list[bytes] = []
    answered = anyio.Event()
    sent_body = False

    async def receive() -> dict[str, Any]:
        nonlocal sent_body
        if not sent_body:
            sent_body = True
            return {"type": "http.request", "body": body, "more_body": False}
        await answered.wait()
        return {"type": "http.disconnect"}

    async def send(message: Mapping[str, Any]) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
            for key, value in message.get("headers", []):
                headers[key.decode("latin-1").lower()] = value.decode("latin-1")
        elif message["type"] == "http.response.body":
            chunks.append(bytes(message.get("body", b"")))
            if not message.get("more_body", False):
                answered.set()

    await app(scope, receive, send)
    answered.set()
    return status, headers, b"".join(chunks)


async def answer_in_process(
    server: Server[Any],
    surface: ToolSurface,
    payload: Any,
    *,
    headers: Mapping[str, str] | None = None,
) -> HTTPAnswer:
    """POST one JSON-RPC ``payload`` to ``server``'s streamable-HTTP app in process.

    ``headers`` may carry the client's ``mcp-*`` headers (protocol version); the
    content negotiation headers are set here.
    """
    manager = _session_manager(server)
    wire = [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    wire = [pair for pair in wire if pair[0].startswith(b"mcp-") and pair[0] != b"mcp-session-id"]
    wire += [
        *_JSON,
        (b"accept", b"application/json, text/event-stream"),
        (b"host", b"127.0.0.1"),
    ]
    scope: dict[str, Any] = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "headers": wire,
        "client": ("127.0.0.1", 0),
        "server": ("127.0.0.1", 0),
        SURFACE_SCOPE_KEY: surface,
    }
    body = json.dumps(complete_initialize(payload), ensure_ascii=False).encode("utf-8")
    async with manager.run():
        status, answer_headers, answer = await _call_asgi(manager.handle_request, scope, body)
    return HTTPAnswer(status, answer_headers.get("content-type", ""), answer)
