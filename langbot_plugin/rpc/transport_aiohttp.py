"""Transport over an aiohttp WebSocket (server side), for daemons built on aiohttp."""

from __future__ import annotations

import anyio
from aiohttp import WSMsgType, web
from anyio.abc import ObjectReceiveStream, ObjectSendStream

from langbot_plugin.rpc.errors import MalformedMessageError, MessageTooLargeError
from langbot_plugin.rpc.transport import ReceivedItem, Transport

__all__ = ["aiohttp_transport"]


class _Reader(ObjectReceiveStream[ReceivedItem]):
    def __init__(self, ws: web.WebSocketResponse) -> None:
        self._ws = ws

    async def receive(self) -> ReceivedItem:
        while True:
            message = await self._ws.receive()
            if message.type is WSMsgType.TEXT:
                return str(message.data)
            if message.type is WSMsgType.BINARY:
                return bytes(message.data).decode("utf-8", errors="replace")
            if message.type is WSMsgType.ERROR:
                error = self._ws.exception()
                if error is not None and "too big" in str(error).lower():
                    return MessageTooLargeError(str(error))
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
