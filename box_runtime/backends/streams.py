"""Byte streams over bounded in-memory channels of chunks.

A backend that produces a process's output itself (the fake backend's programs) hands
the runtime :class:`ChunkReceiveStream` ends; :func:`chunk_channel` makes a bounded
pair, so the producer waits when the consumer is slow (nothing is dropped).
"""

from __future__ import annotations

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

__all__ = ["ChunkReceiveStream", "ChunkSendStream", "chunk_channel"]


class ChunkReceiveStream(ByteReceiveStream):
    """Reads the chunks of a memory channel as a byte stream (a chunk may be split)."""

    def __init__(self, channel: MemoryObjectReceiveStream[bytes]) -> None:
        self._channel = channel
        self._rest = b""

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if not self._rest:
            try:
                self._rest = await self._channel.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                raise anyio.EndOfStream from None
        data, self._rest = self._rest[:max_bytes], self._rest[max_bytes:]
        return data

    def backlog(self) -> int:
        """Chunks written but not read yet."""
        return self._channel.statistics().current_buffer_used

    @property
    def capacity(self) -> float:
        return self._channel.statistics().max_buffer_size

    async def aclose(self) -> None:
        self._channel.close()


class ChunkSendStream(ByteSendStream):
    """Writes byte chunks into a memory channel; closing it ends the reader's stream."""

    def __init__(self, channel: MemoryObjectSendStream[bytes]) -> None:
        self._channel = channel

    async def send(self, item: bytes) -> None:
        try:
            await self._channel.send(bytes(item))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise anyio.BrokenResourceError from None

    async def aclose(self) -> None:
        self._channel.close()


def chunk_channel(chunks: int = 16) -> tuple[ChunkSendStream, ChunkReceiveStream]:
    """A bounded channel of at most ``chunks`` chunks in flight."""
    send, receive = anyio.create_memory_object_stream[bytes](chunks)
    return ChunkSendStream(send), ChunkReceiveStream(receive)
