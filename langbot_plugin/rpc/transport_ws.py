"""WebSocket transport on the ``websockets`` library (client and server).

One text message per frame. The server side takes an optional ``authorize`` hook that
sees the HTTP upgrade request and may refuse it (401/403) before any frame flows, and a
``http_routes`` table for plain GETs on the same port (``/healthz``).

Both sides set the library's frame limit (``max_size``) to the RPC limit of 16 MiB, so
a larger frame is refused from its header, before its payload is read. A WebSocket
cannot skip one frame and go on, so the refusing side closes the connection with code
1009 (message too big) and a reason naming the limit; the reader of either side then
yields one ``message_too_large`` item (the session logs it) before the end of stream.
"""

from __future__ import annotations

import http
from collections.abc import AsyncGenerator, Awaitable, Callable, Mapping
from contextlib import asynccontextmanager
from typing import Any

import anyio
from anyio.abc import ObjectReceiveStream, ObjectSendStream
from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.connection import Connection
from websockets.asyncio.server import Server, ServerConnection, serve
from websockets.datastructures import Headers
from websockets.exceptions import ConnectionClosed
from websockets.frames import DATA_OPCODES, CloseCode, Frame, Opcode
from websockets.http11 import Request as HTTPRequest
from websockets.http11 import Response as HTTPResponse
from websockets.protocol import Event, State

from langbot_plugin.rpc.errors import MessageTooLargeError
from langbot_plugin.rpc.push_context import in_callback_context
from langbot_plugin.rpc.transport import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ReceivedItem,
    Transport,
    decode_binary,
)
from langbot_plugin.rpc.turn_batch import TurnBatch

__all__ = [
    "AuthDecision",
    "HTTPRequestRoute",
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
#: A GET that sees the request and its peer's address: ``(status, body, content type)``.
HTTPRequestRoute = Callable[[HTTPRequest, str], tuple[http.HTTPStatus, str, str]]


async def _close(connection: Connection) -> None:
    try:
        await connection.close()
    except AttributeError:
        # Closing a connection that is already going away makes websockets abort its
        # transport; if asyncio's selector transport has just finished flushing a
        # deferred close (a big frame was still buffered when the peer closed), abort()
        # reaches for the loop it already let go of (the race of anyio#1250). The
        # connection is closed either way.
        if connection.state is not State.CLOSED:
            raise


def _too_big(closed: ConnectionClosed) -> MessageTooLargeError | None:
    """The refusal behind a close with code 1009, by this side or by the peer."""
    sent, received = closed.sent, closed.rcvd
    peer_first = sent is None or closed.rcvd_then_sent is not False
    if received is not None and received.code == CloseCode.MESSAGE_TOO_BIG and peer_first:
        who, frame = "the peer refused a frame and closed", received
    elif sent is not None and sent.code == CloseCode.MESSAGE_TOO_BIG:
        who, frame = "refused a frame and closed the connection", sent
    else:
        return None
    why = f": {frame.reason}" if frame.reason else ""
    return MessageTooLargeError(f"{who} (1009, message too big){why}")


class _Push:
    """Where a connection's complete text messages go without the library's queue.

    With a ``sink`` set, a complete text message is handed to it from the protocol's
    data callback, in the event-loop turn that read it (for a session: a response
    reaches its caller's future, a ``__ping`` is answered, a request's task is started,
    one turn earlier than through ``recv``). Only while no message waits in the
    library's queue, so the order of messages is kept; a binary or fragmented message,
    one that is not UTF-8 (the library's ``recv`` then refuses it as before) and every
    message arriving while older ones wait are queued for ``recv``."""

    __slots__ = ("queued", "sink")

    def __init__(self) -> None:
        self.sink: Callable[[str], object] | None = None
        #: complete messages handed to the library's queue and not yet received
        self.queued = 0

    def take(self, event: Event) -> bool:
        """Whether ``event`` went to the sink (else the library handles it)."""
        if not isinstance(event, Frame) or event.opcode not in DATA_OPCODES:
            return False
        if self.sink is not None and not self.queued and event.fin and event.opcode is Opcode.TEXT:
            try:
                text = str(event.data, "utf-8")
            except UnicodeDecodeError:
                pass
            else:
                self.sink(text)
                return True
        if event.fin:
            self.queued += 1
        return False


class _Pushing(Connection):
    """Put before the library's client or server connection class: offers each event
    to a :class:`_Push` before the library processes it."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.push = _Push()

    def process_event(self, event: Event) -> None:
        if not self.push.take(event):
            super().process_event(event)


class _PushClientConnection(_Pushing, ClientConnection):
    pass


class _PushServerConnection(_Pushing, ServerConnection):
    pass


class WSFrameReader(ObjectReceiveStream[ReceivedItem]):
    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._reported = False
        push = getattr(connection, "push", None)
        self._push = push if isinstance(push, _Push) else None

    def push_to(self, sink: Callable[[ReceivedItem], object] | None) -> bool:
        """Hand complete text messages to ``sink`` as the connection reads them, in the
        context of the caller (:mod:`.push_context`; ``None`` stops it); ``False`` when
        this connection was not opened by :func:`connect_ws` or :func:`serve_ws`.
        :meth:`receive` still yields what the sink is not given (see :class:`_Push`), in
        order."""
        if self._push is None:
            return False
        self._push.sink = None if sink is None else in_callback_context(sink)
        return True

    async def receive(self) -> ReceivedItem:
        try:
            message = await self._connection.recv()
        except ConnectionClosed as closed:
            refused = None if self._reported else _too_big(closed)
            if refused is not None:
                self._reported = True
                return refused
            raise anyio.EndOfStream from None
        if self._push is not None:
            self._push.queued -= 1
        if isinstance(message, bytes):
            return decode_binary(message)
        return message

    async def aclose(self) -> None:
        await _close(self._connection)


class WSFrameWriter(ObjectSendStream[str]):
    """Writes each frame as one WebSocket text message; the messages written in one
    event-loop turn reach the socket in one write (:mod:`.turn_batch`)."""

    def __init__(self, connection: Connection) -> None:
        self._connection = connection
        self._batch = TurnBatch(self._write_out)

    def _write_out(self) -> None:
        """Hand every message the library holds to the socket in one write."""
        connection = self._connection
        if connection.protocol.state is not State.OPEN:
            connection.send_data()  # the library's own write knows the end of stream
            return
        chunks = connection.protocol.data_to_send()
        if chunks:
            connection.transport.write(chunks[0] if len(chunks) == 1 else b"".join(chunks))

    def send_nowait(self, item: str) -> bool:
        """Send ``item`` now if the library would send it without waiting; else ``False``.

        ``Connection.send`` of a text message waits only while another (fragmented)
        message is being sent, while the write buffer is above its high-water mark
        (``paused``) or while the connection closes; otherwise it encodes the frame and
        hands it to the transport at once, which is what this does (the turn's later
        frames join it at the end of the turn, :mod:`.turn_batch`). Any of those states,
        or a library version without these attributes, answers ``False`` (the caller
        then uses the library's ``send``, which writes what is held first). Used for
        every frame by :meth:`send`, and for ``__ping`` answers from the session's
        receive loop (issue 22).
        """
        connection = self._connection
        if (
            connection.protocol.state is not State.OPEN
            or getattr(connection, "paused", True) is not False
            or getattr(connection, "send_in_progress", True) is not None
            or connection.transport.is_closing()
        ):
            return False
        data = item.encode()
        connection.protocol.send_text(data)
        self._batch.wrote(len(data))
        return True

    async def send(self, item: str) -> None:
        if self.send_nowait(item):  # the common case, without the library's send context
            return
        try:
            await self._connection.send(item)
        except ConnectionClosed as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        await _close(self._connection)


def ws_transport(connection: Connection) -> Transport:
    """Wrap an open ``websockets`` connection (either side)."""
    return Transport(receive=WSFrameReader(connection), send=WSFrameWriter(connection))


@asynccontextmanager
async def connect_ws(
    url: str,
    *,
    headers: Mapping[str, str] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
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
        create_connection=_PushClientConnection,
    )
    try:
        yield ws_transport(connection)
    finally:
        with anyio.CancelScope(shield=True):
            await _close(connection)


def _text_response(
    status: http.HTTPStatus, body: str, content_type: str = "text/plain; charset=utf-8"
) -> HTTPResponse:
    payload = body.encode("utf-8")
    headers = Headers([("Content-Type", content_type), ("Content-Length", str(len(payload)))])
    return HTTPResponse(status.value, status.phrase, headers, payload)


async def serve_ws(
    on_connection: Callable[[Transport, HTTPRequest], Awaitable[None]],
    host: str,
    port: int,
    *,
    paths: frozenset[str] | None = None,
    authorize: Callable[[HTTPRequest], AuthDecision] | None = None,
    http_routes: Mapping[str, HTTPRoute] | None = None,
    request_routes: Mapping[str, HTTPRequestRoute] | None = None,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> Server:
    """Start a WebSocket server; ``on_connection`` runs once per accepted connection.

    ``paths`` restricts the upgrade to these request paths (404 otherwise).
    ``request_routes`` answer GETs that need the request (its headers) and the peer's
    address (``host``, without the port), e.g. to check a token.
    """
    routes = dict(http_routes or {})
    with_request = dict(request_routes or {})

    def process_request(connection: ServerConnection, request: HTTPRequest) -> HTTPResponse | None:
        path = request.path.split("?", 1)[0]
        plain = "upgrade" not in request.headers.get("Connection", "").lower()
        route = routes.get(path)
        if route is not None and plain:
            status, body = route()
            return _text_response(status, body)
        full = with_request.get(path)
        if full is not None and plain:
            peer = connection.remote_address
            status, body, content_type = full(request, str(peer[0]) if peer else "")
            return _text_response(status, body, content_type)
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
        create_connection=_PushServerConnection,
    )
