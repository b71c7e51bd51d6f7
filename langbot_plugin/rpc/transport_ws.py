"""WebSocket transport on the ``websockets`` library (client and server).

One text message per frame. The server side takes an optional ``authorize`` hook that
sees the HTTP upgrade request and may refuse it (401/403) before any frame flows, and a
``http_routes`` table for plain GETs on the same port (``/healthz``).
"""

from __future__ import annotations

import http
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.connection import Connection
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request as HTTPRequest
from websockets.http11 import Response as HTTPResponse

from langbot_plugin.rpc.transport import HARD_MAX_MESSAGE_BYTES, ReceivedItem, Transport

__all__ = [
    "AuthDecision",
    "HTTPRoute",
    "WSFrameReader",
    "WSFrameWriter",
    "connect_ws",
    "serve_ws",
    "ws_transport",
]

#: ``None`` lets the upgrade through; a ``(status, text)`` pair refuses it.
AuthDecision = tuple[http.HTTPStatus, str] | None
HTTPRoute = Callable[[], tuple[http.HTTPStatus, str]]


class WSFrameReader(ObjectReceiveStream[ReceivedItem]):
    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def receive(self) -> ReceivedItem:
        try:
            message = await self._connection.recv()
        except ConnectionClosed:
            raise anyio.EndOfStream from None
        if isinstance(message, bytes):
            return message.decode("utf-8", errors="replace")
        return message

    async def aclose(self) -> None:
        await self._connection.close()


class WSFrameWriter(ObjectSendStream[str]):
    def __init__(self, connection: Connection) -> None:
        self._connection = connection

    async def send(self, item: str) -> None:
        try:
            await self._connection.send(item)
        except ConnectionClosed as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        await self._connection.close()


def ws_transport(connection: Connection) -> Transport:
    """Wrap an open ``websockets`` connection (either side)."""
    return Transport(receive=WSFrameReader(connection), send=WSFrameWriter(connection))


@asynccontextmanager
async def connect_ws(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int = HARD_MAX_MESSAGE_BYTES,
    open_timeout: float = 10.0,
) -> AsyncGenerator[Transport]:
    """Open a client connection to ``url`` and yield its transport."""
    connection: ClientConnection = await connect(
        url,
        additional_headers=dict(headers or {}),
        max_size=max_message_bytes,
        open_timeout=open_timeout,
        ping_interval=None,
        compression=None,
    )
    try:
        yield ws_transport(connection)
    finally:
        with anyio.CancelScope(shield=True):
            await connection.close()


def _text_response(status: http.HTTPStatus, body: str) -> HTTPResponse:
    payload = body.encode("utf-8")
    headers = Headers(
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(payload)))]
    )
    return HTTPResponse(status.value, status.phrase, headers, payload)


async def serve_ws(
    on_connection: Callable[[Transport, HTTPRequest], Awaitable[None]],
    host: str,
    port: int,
    *,
    paths: frozenset[str] | None = None,
    authorize: Callable[[HTTPRequest], AuthDecision] | None = None,
    http_routes: Mapping[str, HTTPRoute] | None = None,
    max_message_bytes: int = HARD_MAX_MESSAGE_BYTES,
) -> Server:
    """Start a WebSocket server; ``on_connection`` runs once per accepted connection.

    ``paths`` restricts the upgrade to these request paths (404 otherwise).
    """
    routes = dict(http_routes or {})

    def process_request(_: ServerConnection, request: HTTPRequest) -> HTTPResponse | None:
        path = request.path.split("?", 1)[0]
        route = routes.get(path)
        if route is not None and "upgrade" not in request.headers.get("Connection", "").lower():
            status, body = route()
            return _text_response(status, body)
        if paths is not None and path not in paths:
            return _text_response(http.HTTPStatus.NOT_FOUND, f"no WebSocket endpoint at {path}\n")
        if authorize is not None:
            decision = authorize(request)
            if decision is not None:
                return _text_response(decision[0], decision[1] + "\n")
        return None

    async def handler(connection: ServerConnection) -> None:
        request = connection.request
        assert request is not None
        await on_connection(ws_transport(connection), request)

    return await serve(
        handler,
        host,
        port,
        process_request=process_request,
        max_size=max_message_bytes,
        ping_interval=None,
        compression=None,
    )
