"""NDJSON over a pair of byte streams (pipes), with chunk framing for big frames.

One frame per line; a frame larger than ``frame_threshold`` bytes goes as the reference
peers expect it, ``chunk_start``/``chunk_data``/``chunk_end`` lines whose ``offset``
counts UTF-8 bytes (pieces never split a code point), written with one write. How a
frame over ``max_message_bytes`` is skipped without being kept, and answered as
``message_too_large``, is in docs/architecture.md ("Oversized frames").
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import AsyncGenerator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
from anyio.abc import (
    ByteReceiveStream,
    ByteSendStream,
    ObjectReceiveStream,
    ObjectSendStream,
    Process,
)

from langbot_plugin.rpc import wire_json
from langbot_plugin.rpc.envelope import HINT_CHARS, dumps, frame_hint
from langbot_plugin.rpc.errors import MalformedMessageError, MessageTooLargeError
from langbot_plugin.rpc.pipe_reader import PipeReader, read_pipe
from langbot_plugin.rpc.push_context import in_callback_context
from langbot_plugin.rpc.transport import DEFAULT_MAX_MESSAGE_BYTES, ReceivedItem, Transport
from langbot_plugin.rpc.turn_batch import TurnBatch

__all__ = [
    "REFERENCE_FRAME_THRESHOLD",
    "StdioFrameReader",
    "StdioFrameWriter",
    "child_stdio_transport",
    "pipe_transport",
    "process_stdio_transport",
    "read_pipe",
    "split_utf8",
    "stdio_transport",
]

#: Frames above this size are chunk-framed for reference peers (16 KiB, as they send).
REFERENCE_FRAME_THRESHOLD = 16 * 1024
_READ_SIZE = 256 * 1024
_CONTROL_LINE = re.compile(rb'^\s*\{\s*"type"\s*:')


def split_utf8(encoded: bytes, piece_bytes: int) -> list[str]:
    """Cut UTF-8 ``encoded`` into decoded pieces of at most ``piece_bytes`` bytes."""
    if piece_bytes < 4:
        raise ValueError("piece_bytes must hold at least one code point")
    pieces: list[str] = []
    start, total = 0, len(encoded)
    while start < total:
        end = min(start + piece_bytes, total)
        # Step back over continuation bytes (0b10xxxxxx) so a code point stays whole.
        while end < total and (encoded[end] & 0xC0) == 0x80:
            end -= 1
        pieces.append(encoded[start:end].decode("utf-8"))
        start = end
    return pieces


class StdioFrameWriter(ObjectSendStream[str]):
    """Writes frames as lines, chunk-framing the big ones when a threshold is set."""

    def __init__(
        self,
        stream: ByteSendStream,
        *,
        frame_threshold: int | None = REFERENCE_FRAME_THRESHOLD,
        piece_bytes: int = REFERENCE_FRAME_THRESHOLD,
        atomic_writes: bool = False,
    ) -> None:
        self._stream = stream
        self._threshold = frame_threshold
        self._piece_bytes = piece_bytes
        # A stream that hands each frame to its buffer in one synchronous write cannot
        # interleave frames; others (sockets, for instance) need the lock.
        self._lock = None if atomic_writes else anyio.Lock()

    def _encode(self, item: str) -> bytes:
        encoded = item.encode("utf-8")
        if self._threshold is None or len(encoded) <= self._threshold:
            return encoded + b"\n"
        parts = [dumps({"type": "chunk_start", "total_size": len(encoded)})]
        offset = 0
        for piece in split_utf8(encoded, self._piece_bytes):
            parts.append(dumps({"type": "chunk_data", "data": piece, "offset": offset}))
            offset += len(piece.encode("utf-8"))
        parts.append('{"type":"chunk_end"}')
        parts.append("")
        return "\n".join(parts).encode("utf-8")

    async def send(self, item: str) -> None:
        payload = self._encode(item)
        if self._lock is None:
            await self._stream.send(payload)
            return
        async with self._lock:
            await self._stream.send(payload)

    async def aclose(self) -> None:
        await self._stream.aclose()


class StdioFrameReader(ObjectReceiveStream[ReceivedItem]):
    """Reads lines, reassembles chunk-framed messages, reports bad frames as items."""

    def __init__(
        self, stream: ByteReceiveStream, *, max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES
    ) -> None:
        self._stream = stream
        self._max = max_message_bytes
        self._buffer = bytearray()
        self._scan_from = 0
        #: inside an oversized line: its head, while the rest is dropped up to its newline
        self._discarding: bytes | None = None
        self._eof = False
        self._pieces: list[str] | None = None  # collecting a chunk-framed message
        self._declared = 0
        self._received = 0
        #: inside a refused chunk-framed message: its declared size and its head
        self._skipping: tuple[object, str] | None = None

    def _buffered_line(self) -> bytes | None:
        """The next whole line in the buffer, or ``None`` until more bytes come (the
        refusal of an oversized line is raised once its newline has come)."""
        newline = self._buffer.find(b"\n", self._scan_from)
        if newline < 0:
            self._scan_from = len(self._buffer)
            if self._discarding is None and len(self._buffer) > self._max:
                self._discarding = bytes(self._buffer[:HINT_CHARS])
            if self._discarding is not None:  # all of it belongs to the oversized line
                self._buffer.clear()
                self._scan_from = 0
            return None
        line = bytes(self._buffer[:newline])
        del self._buffer[: newline + 1]
        self._scan_from = 0
        if self._discarding is not None:
            head, self._discarding = self._discarding, None
            raise self._too_large("line", head.decode("utf-8", errors="replace"))
        if len(line) > self._max:  # it ended within the last read
            raise self._too_large("line", line[:HINT_CHARS].decode("utf-8", errors="replace"))
        return line

    async def _next_line(self) -> bytes:
        while True:
            line = self._buffered_line()
            if line is not None:
                return line
            if self._eof:
                raise anyio.EndOfStream
            try:
                chunk = await self._stream.receive(_READ_SIZE)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                self._eof = True
                if self._buffer and self._discarding is None:
                    line = bytes(self._buffer)
                    self._buffer.clear()
                    return line
                raise anyio.EndOfStream from None
            self._buffer += chunk

    def _too_large(self, what: str, head: str, declared: object = None) -> MessageTooLargeError:
        """The refusal of an oversized frame, with what its head says about it."""
        seq, is_request = frame_hint(head)
        details: dict[str, object] = {"limit": self._max, "seq_id": seq, "request": is_request}
        if declared is not None:
            details["actual"] = declared
        return MessageTooLargeError(
            f"{what} exceeds the {self._max}-byte frame limit; skipped", details=details
        )

    def _control(self, line: bytes) -> str | None:
        """Handle a chunk-framing line; return a completed frame or ``None``."""
        try:
            obj: Any = wire_json.loads(line.decode("utf-8"))
        except (ValueError, MalformedMessageError) as exc:  # not UTF-8, not JSON, or
            self._pieces = None  # outside the wire rule: the frame it belonged to is lost
            raise MalformedMessageError(f"invalid framing line: {exc}") from None
        kind = obj.get("type") if isinstance(obj, dict) else None
        if self._skipping is not None:
            return self._skip(kind, obj)
        if kind == "chunk_start":
            total = obj.get("total_size")
            if isinstance(total, int) and total > self._max:
                self._pieces, self._skipping = None, (total, "")
                return None
            if not isinstance(total, int) or total < 0:
                raise MalformedMessageError(f"chunk_start with total_size {total!r}")
            self._pieces, self._declared, self._received = [], total, 0
            return None
        if kind == "chunk_data" and self._pieces is not None:
            piece = obj.get("data")
            if not isinstance(piece, str) or obj.get("offset") != self._received:
                self._pieces = None
                raise MalformedMessageError("chunk_data out of order or without text")
            self._received += len(piece.encode("utf-8"))
            if self._received > self._declared:
                self._pieces = None
                raise MalformedMessageError("chunked frame longer than declared")
            self._pieces.append(piece)
            return None
        if kind == "chunk_end" and self._pieces is not None:
            pieces, self._pieces = self._pieces, None
            if self._received != self._declared:
                raise MalformedMessageError("chunked frame shorter than declared")
            return "".join(pieces)
        self._pieces = None
        raise MalformedMessageError(f"unexpected framing line of type {kind!r}")

    def _skip(self, kind: object, obj: Any) -> None:
        """Drop the pieces of a refused chunk-framed message; refuse it at its end."""
        assert self._skipping is not None
        declared, head = self._skipping
        if kind == "chunk_data":
            if len(head) < HINT_CHARS and isinstance(obj.get("data"), str):
                self._skipping = declared, head + obj["data"][: HINT_CHARS - len(head)]
            return None
        self._skipping = None
        what = "chunked frame" if kind == "chunk_end" else f"chunked frame (cut by {kind!r})"
        raise self._too_large(what, head, declared)

    def _item(self, line: bytes) -> ReceivedItem | None:
        """What ``line`` gives: a frame, the error of one, or ``None`` (a blank line, a
        piece of a chunk-framed frame)."""
        if not line.strip():
            return None
        if _CONTROL_LINE.match(line[:64]):
            try:
                return self._control(line)
            except (MessageTooLargeError, MalformedMessageError) as exc:
                return exc
        if self._skipping is not None:
            declared, head = self._skipping
            self._skipping = None
            return self._too_large("chunked frame", head, declared)
        if self._pieces is not None:
            self._pieces = None
            return MalformedMessageError("plain line inside a chunked frame")
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError as exc:
            return MalformedMessageError(f"line is not UTF-8: {exc}")

    async def receive(self) -> ReceivedItem:
        while True:
            try:
                line = await self._next_line()
            except (MessageTooLargeError, MalformedMessageError) as exc:
                return exc
            item = self._item(line)
            if item is not None:
                return item

    def push_to(self, sink: Callable[[ReceivedItem], object] | None) -> bool:
        """Hand each frame to ``sink`` in the event-loop turn its bytes were read, in
        the caller's context (:mod:`.push_context`; ``None`` stops it); ``False``
        unless the stream is a pipe of :func:`read_pipe`. :meth:`receive` then yields
        only the last unterminated line at the end of the stream."""
        if not isinstance(self._stream, PipeReader):
            return False
        if sink is None:
            self._stream.push_bytes_to(None)
            return True
        run = in_callback_context(sink)

        def fed(data: bytes) -> None:
            self._buffer += data
            while True:
                try:
                    line = self._buffered_line()
                except (MessageTooLargeError, MalformedMessageError) as exc:
                    run(exc)
                    continue
                if line is None:
                    return
                item = self._item(line)
                if item is not None:
                    run(item)

        fed(b"")  # lines a receive read ahead, then the bytes the pipe holds
        self._stream.push_bytes_to(fed)
        return True

    async def aclose(self) -> None:
        await self._stream.aclose()


@asynccontextmanager
async def stdio_transport(
    reader: ByteReceiveStream,
    writer: ByteSendStream,
    *,
    frame_threshold: int | None = REFERENCE_FRAME_THRESHOLD,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
    atomic_writes: bool = False,
) -> AsyncGenerator[Transport]:
    """A transport over two byte streams (for example a child process's pipes)."""
    receive = StdioFrameReader(reader, max_message_bytes=max_message_bytes)
    send = StdioFrameWriter(writer, frame_threshold=frame_threshold, atomic_writes=atomic_writes)
    try:
        yield Transport(receive=receive, send=send)
    finally:
        with anyio.CancelScope(shield=True):
            for closer in (send.aclose, receive.aclose):
                try:
                    await closer()
                except (OSError, anyio.BrokenResourceError, anyio.ClosedResourceError):
                    pass


def child_stdio_transport(process: Process) -> AbstractAsyncContextManager[Transport]:
    """A transport over the stdout and stdin of a child anyio started with pipes.

    anyio's process stdin writes each frame in one synchronous write before it waits, so
    frames cannot interleave and the writer needs no lock: with it, 64 concurrent pings
    went through a third as fast (each waiter woken through extra event-loop turns)."""
    if process.stdout is None or process.stdin is None:
        raise ValueError("the child was not started with stdin and stdout pipes")
    return stdio_transport(process.stdout, process.stdin, atomic_writes=True)


class _PipeWriter(ByteSendStream):
    """A pipe's writing end; the frames written in one event-loop turn go out in one
    write (:mod:`.turn_batch`), and ``send`` waits on the pipe's high-water mark."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._held: list[bytes] = []
        self._batch = TurnBatch(self._write_out)

    def _write_out(self) -> None:
        held, self._held = self._held, []
        if held and not self._writer.is_closing():
            self._writer.write(held[0] if len(held) == 1 else b"".join(held))

    async def send(self, item: bytes) -> None:
        if self._writer.is_closing():
            raise anyio.BrokenResourceError
        self._held.append(item)
        self._batch.wrote(len(item))
        try:
            await self._writer.drain()
        except (ConnectionError, RuntimeError) as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        self._write_out()
        self._writer.close()


@asynccontextmanager
async def pipe_transport(
    read_fd: int,
    write_fd: int,
    *,
    frame_threshold: int | None = REFERENCE_FRAME_THRESHOLD,
    max_message_bytes: int = DEFAULT_MAX_MESSAGE_BYTES,
) -> AsyncGenerator[Transport]:
    """A transport over two pipe file descriptors (both are closed on exit)."""
    loop = asyncio.get_running_loop()
    receive = await read_pipe(read_fd)
    write_transport, write_protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, os.fdopen(write_fd, "wb", buffering=0)
    )
    writer = asyncio.StreamWriter(write_transport, write_protocol, None, loop)
    async with stdio_transport(
        receive,
        _PipeWriter(writer),  # write() is synchronous: frames never interleave
        frame_threshold=frame_threshold,
        max_message_bytes=max_message_bytes,
        atomic_writes=True,
    ) as transport:
        yield transport


@asynccontextmanager
async def process_stdio_transport(
    *, frame_threshold: int | None = REFERENCE_FRAME_THRESHOLD
) -> AsyncGenerator[Transport]:
    """A transport over this process's own stdin and stdout.

    The protocol gets private duplicates of descriptors 0 and 1, and descriptor 1 is
    pointed at stderr, so a stray ``print`` in plugin code lands in the logs instead of
    corrupting the channel.
    """
    sys.stdout.flush()
    protocol_in = os.dup(0)
    protocol_out = os.dup(1)
    os.dup2(2, 1)
    async with pipe_transport(
        protocol_in, protocol_out, frame_threshold=frame_threshold
    ) as transport:
        yield transport
