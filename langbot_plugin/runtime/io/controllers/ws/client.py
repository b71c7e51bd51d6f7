"""Dial a runtime's WebSocket (``ws://HOST:5400/control/ws``, ``ws://HOST:5410/rpc/ws``)."""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping
from typing import Any

from langbot_plugin.rpc.transport_ws import connect_ws
from langbot_plugin.runtime.io.connection import MAX_MESSAGE_BYTES, TransportConnection
from langbot_plugin.runtime.io.controller import Controller, NewConnectionCallback

__all__ = ["WebSocketClientController"]

FailedCallback = Callable[[Controller, Exception | None], Coroutine[Any, Any, None]]


class WebSocketClientController(Controller):
    """Opens one connection; any failure (connecting or later) goes to the failed callback."""

    def __init__(
        self,
        ws_url: str,
        make_connection_failed_callback: FailedCallback,
        additional_headers: Mapping[str, str] | None = None,
        *,
        open_timeout: float = 10.0,
    ) -> None:
        self.ws_url = ws_url
        self.make_connection_failed_callback = make_connection_failed_callback
        self.additional_headers = dict(additional_headers or {})
        self.open_timeout = open_timeout

    async def run(self, new_connection_callback: NewConnectionCallback) -> None:
        try:
            async with connect_ws(
                self.ws_url,
                headers=self.additional_headers,
                max_message_bytes=MAX_MESSAGE_BYTES,
                open_timeout=self.open_timeout,
            ) as transport:
                await new_connection_callback(TransportConnection(transport))
        except Exception as exc:
            await self.make_connection_failed_callback(self, exc)
