"""A host's frame channel to a runtime.

:class:`Connection` is the abstract shape the reference gives its connections
(``send``/``receive``/``close`` of whole frames); the controllers hand out
:class:`TransportConnection`, a connection over one of the RPC core's transports, which a
:class:`~langbot_plugin.runtime.io.handler.Handler` runs its session on directly.
"""

from __future__ import annotations

import abc

import anyio

from langbot_plugin.rpc.errors import ConnectionClosedError, RPCError
from langbot_plugin.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES, Transport

__all__ = ["MAX_MESSAGE_BYTES", "Connection", "TransportConnection"]

#: Largest frame either side accepts (the RPC core's limit).
MAX_MESSAGE_BYTES = DEFAULT_MAX_MESSAGE_BYTES

_GONE = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)


class Connection(abc.ABC):
    """One bidirectional channel of JSON frames."""

    @abc.abstractmethod
    async def send(self, message: str) -> None: ...

    @abc.abstractmethod
    async def receive(self) -> str: ...

    @abc.abstractmethod
    async def close(self) -> None: ...


class TransportConnection(Connection):
    """A :class:`Connection` over an RPC transport (stdio pipes or a WebSocket)."""

    def __init__(self, transport: Transport) -> None:
        self.transport = transport

    async def send(self, message: str) -> None:
        try:
            await self.transport.send.send(message)
        except _GONE as exc:
            raise ConnectionClosedError("connection closed during send") from exc

    async def receive(self) -> str:
        try:
            item = await self.transport.receive.receive()
        except _GONE as exc:
            raise ConnectionClosedError("connection closed") from exc
        if isinstance(item, RPCError):
            raise item
        return item

    async def close(self) -> None:
        with anyio.CancelScope(shield=True):
            for stream in (self.transport.send, self.transport.receive):
                try:
                    await stream.aclose()
                except _GONE:
                    pass
