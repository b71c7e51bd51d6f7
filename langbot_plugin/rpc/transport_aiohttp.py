"""Transport over an aiohttp WebSocket (server side), for daemons built on aiohttp.

:func:`websocket_response` sets aiohttp's message limit to the RPC limit of 16 MiB, so
a larger frame is refused from its header, before its payload is read; aiohttp then
closes the connection with code 1009 (message too big) and the reader yields one
``message_too_large`` item before the end of stream.
"""

from __future__ import annotations

import anyio
from aiohttp import WSCloseCode, WSMsgType, web
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from langbot_plugin.rpc.errors import MalformedMessageError, MessageTooLargeError
from langbot_plugin.rpc.transport import (
    DEFAULT_MAX_MESSAGE_BYTES,
    ReceivedItem,
    Transport,
    decode_binary,
)

__all__ = ["aiohttp_transport", "websocket_response"]


def websocket_response(
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> web.WebSocketResponse:
    """A ``WebSocketResponse`` that accepts frames up to ``max_message_bytes``, no more."""
    # aiohttp refuses a message of max_msg_size bytes or more; the RPC limit is inclusive.
    return web.WebSocketResponse(max_msg_size=max_message_bytes + 1)


class _Reader(ObjectReceiveStream[ReceivedItem]):
    def __init__(self, ws: web.WebSocketResponse) -> None:
        self._ws = ws

    async def receive(self) -> ReceivedItem:
        while True:
            message = await self._ws.receive()
            if message.type is WSMsgType.TEXT:
                return str(message.data)
            if message.type is WSMsgType.BINARY:
                return decode_binary(bytes(message.data))
            if message.type is WSMsgType.ERROR:
                error = self._ws.exception()
                if getattr(error, "code", None) == WSCloseCode.MESSAGE_TOO_BIG:
                    return MessageTooLargeError(
                        f"refused a frame and closed the connection (1009, message too big): "
                        f"{error}"
                    )
                if error is not None:
                    return MalformedMessageError(str(error))
            if message.type in (
                WSMsgType.CLOSE,
                WSMsgType.CLOSING,
                WSMsgType.CLOSED,
                WSMsgType.ERROR,
            ):
                raise anyio.EndOfStream

    async def aclose(self) -> None:
        await self._ws.close()


class _Writer(ObjectSendStream[str]):
    def __init__(self, ws: web.WebSocketResponse) -> None:
        self._ws = ws

    async def send(self, item: str) -> None:
        if self._ws.closed:
            raise anyio.BrokenResourceError
        try:
            await self._ws.send_str(item)
        except (ConnectionError, RuntimeError) as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        await self._ws.close()


def aiohttp_transport(ws: web.WebSocketResponse) -> Transport:
    """Wrap a prepared aiohttp ``WebSocketResponse``."""
    return Transport(receive=_Reader(ws), send=_Writer(ws))
