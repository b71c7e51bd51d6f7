"""The reading end of a pipe on the running loop, able to hand its bytes over as they
arrive.

:func:`read_pipe` gives a :class:`~anyio.abc.ByteReceiveStream`. With a callback set
(:meth:`PipeReader.push_bytes_to`, which the stdio frame reader uses), the bytes go to
it from the protocol's data callback, in the event-loop turn that read them: a frame is
handled one turn sooner than through ``receive``, as WebSocket frames are
(``transport_ws._Push``). Bytes read before the callback was set go to it first, so the
order is kept; :meth:`~PipeReader.receive` then waits for the end of the stream only.
Without a callback, bytes wait for ``receive``; reading pauses while more than
:data:`PAUSE_BYTES` wait.
"""

from __future__ import annotations

import asyncio
import os
from collections import deque
from collections.abc import Callable

import anyio
from anyio.abc import ByteReceiveStream

__all__ = ["PAUSE_BYTES", "PipeReader", "read_pipe"]

#: Bytes waiting for ``receive`` above which the pipe is not read (the writer then
#: blocks on the full pipe, as with asyncio's stream reader).
PAUSE_BYTES = 512 * 1024


class _PipeProtocol(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.ReadTransport | None = None
        self.callback: Callable[[bytes], object] | None = None
        self.pending: deque[bytes] = deque()
        self.pending_bytes = 0
        self.ended = False
        self.error: BaseException | None = None
        self.paused = False
        self.waiter: asyncio.Future[None] | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.ReadTransport)
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        if self.callback is not None:
            self.callback(data)
            return
        self.pending.append(data)
        self.pending_bytes += len(data)
        if self.pending_bytes > PAUSE_BYTES and not self.paused and self.transport is not None:
            self.paused = True
            self.transport.pause_reading()
        self._wake()

    def eof_received(self) -> bool:
        self.ended = True
        self._wake()
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.ended = True
        self.error = exc
        self._wake()

    def _wake(self) -> None:
        waiter, self.waiter = self.waiter, None
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    def take(self, max_bytes: int) -> bytes:
        data = self.pending.popleft()
        if len(data) > max_bytes:
            data, rest = data[:max_bytes], data[max_bytes:]
            self.pending.appendleft(rest)
        self.pending_bytes -= len(data)
        if self.paused and self.pending_bytes <= PAUSE_BYTES // 2 and self.transport is not None:
            self.paused = False
            self.transport.resume_reading()
        return data


class PipeReader(ByteReceiveStream):
    """A pipe's reading end (:func:`read_pipe`); closing it closes the descriptor."""

    def __init__(self, protocol: _PipeProtocol) -> None:
        self._protocol = protocol

    @property
    def paused(self) -> bool:
        """Whether reading is paused (more than :data:`PAUSE_BYTES` wait for ``receive``)."""
        return self._protocol.paused

    def push_bytes_to(self, callback: Callable[[bytes], object] | None) -> None:
        """Hand every byte read from now on to ``callback`` (``None``: back to
        ``receive``); what was read and not yet received goes to it first."""
        protocol = self._protocol
        if callback is not None:
            while protocol.pending:
                callback(protocol.take(len(protocol.pending[0])))
        protocol.callback = callback

    async def receive(self, max_bytes: int = 65536) -> bytes:
        protocol = self._protocol
        while not protocol.pending:
            if protocol.ended:
                if protocol.error is not None:
                    raise anyio.BrokenResourceError from protocol.error
                raise anyio.EndOfStream
            waiter = protocol.waiter = asyncio.get_running_loop().create_future()
            await waiter
        return protocol.take(max_bytes)

    async def aclose(self) -> None:
        if self._protocol.transport is not None:
            self._protocol.transport.close()


async def read_pipe(read_fd: int) -> PipeReader:
    """The reading end ``read_fd`` of a pipe as a byte stream on the running loop."""
    loop = asyncio.get_running_loop()
    _, protocol = await loop.connect_read_pipe(_PipeProtocol, os.fdopen(read_fd, "rb", buffering=0))
    return PipeReader(protocol)
