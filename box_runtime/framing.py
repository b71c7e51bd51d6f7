"""Message framing of the managed-process relay, and the bounded queue between its ends.

The exact translation, free of I/O, between newline-delimited JSON-RPC on a process's
stdio and one JSON-RPC message per WebSocket text frame: :class:`LineFramer` cuts
stdout into whole lines (an over-long line becomes one :class:`Oversized` item),
:func:`line_for_process` checks a client frame and makes it one line,
:func:`error_frame` is the relay's own JSON-RPC error, and :class:`MessageQueue` is
bounded by bytes and count (``put`` waits, nothing is dropped). See docs/box.md,
*The relay*.
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import anyio

from langbot_plugin.rpc import wire_json
from langbot_plugin.rpc.errors import MalformedMessageError

__all__ = [
    "INTERNAL_ERROR",
    "INVALID_REQUEST",
    "MAX_MESSAGE_BYTES",
    "PARSE_ERROR",
    "FrameError",
    "LineFramer",
    "MessageQueue",
    "Oversized",
    "error_frame",
    "leading_id",
    "line_for_process",
    "response_id_of",
]

#: The largest message the relay carries in either direction (16 MiB, as the RPC core).
MAX_MESSAGE_BYTES = 16 * 1024 * 1024
#: JSON-RPC 2.0 error codes.
PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
#: Bytes of an oversized line kept to find the id of the request it answers.
_HEAD_BYTES = 4096
#: A message that starts ``{"jsonrpc": "2.0", "id": ID, "<next member>"`` (``jsonrpc``
#: optional): how SDKs serialise requests (``method`` next) and responses (``result``,
#: ``error``).
_LEADING_ID = re.compile(
    rb'^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d{1,20}|"(?:[^"\\]|\\.){0,256}")'
    rb'\s*,\s*"(result|error|method)"'
)


@dataclass(frozen=True, slots=True)
class Oversized:
    """A line the framer refused: ``size`` bytes (at least), ``head`` its first bytes."""

    size: int
    head: bytes


class LineFramer:
    """Splits a byte stream into complete lines of at most ``limit`` bytes."""

    def __init__(self, limit: int = MAX_MESSAGE_BYTES) -> None:
        self.limit = limit
        self._buffer = bytearray()
        self._scan = 0
        self._skipped: int | None = None  # bytes of the oversized line being skipped
        self._head = b""

    def feed(self, chunk: bytes) -> list[bytes | Oversized]:
        """The items completed by ``chunk`` (blank lines are not messages)."""
        items: list[bytes | Oversized] = []
        start = 0
        if self._skipped is not None:
            newline = chunk.find(b"\n")
            if newline < 0:
                self._skipped += len(chunk)
                return items
            items.append(Oversized(self._skipped + newline, self._head))
            self._skipped, self._head = None, b""
            start = newline + 1
        buffer = self._buffer
        buffer += memoryview(chunk)[start:]
        begin = 0
        while True:
            newline = buffer.find(b"\n", max(begin, self._scan))
            if newline < 0:
                break
            self._scan = 0
            if newline - begin > self.limit:
                items.append(Oversized(newline - begin, bytes(buffer[begin : begin + _HEAD_BYTES])))
            else:
                line = _message(buffer, begin, newline)
                if line is not None:
                    items.append(line)
            begin = newline + 1
        if begin:
            del buffer[:begin]
        self._scan = len(buffer)
        if len(buffer) > self.limit:
            self._skipped, self._head = len(buffer), bytes(buffer[:_HEAD_BYTES])
            buffer.clear()
            self._scan = 0
        return items

    def end(self) -> list[bytes | Oversized]:
        """The stream ended: an unterminated last line still counts as a message."""
        if self._skipped is not None:
            items: list[bytes | Oversized] = [Oversized(self._skipped, self._head)]
            self._skipped, self._head = None, b""
            return items
        line = _message(self._buffer, 0, len(self._buffer))
        self._buffer.clear()
        self._scan = 0
        return [] if line is None else [line]


def _message(buffer: bytearray, begin: int, end: int) -> bytes | None:
    if end > begin and buffer[end - 1] == 0x0D:  # a CRLF line ending
        end -= 1
    line = bytes(buffer[begin:end])
    return line if line.strip() else None


class FrameError(Exception):
    """A client frame the relay does not pass on; answered with :func:`error_frame`."""

    def __init__(self, code: int, message: str, request_id: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.request_id = request_id


def line_for_process(text: str, limit: int = MAX_MESSAGE_BYTES) -> bytes:
    """One client frame as one stdin line (raises :class:`FrameError`)."""
    data = text.encode("utf-8")
    if len(data) > limit:
        found = leading_id(data[:_HEAD_BYTES])
        raise FrameError(
            INVALID_REQUEST,
            f"the message has {len(data)} bytes; the relay carries at most {limit} bytes a message",
            found[0] if found is not None and found[1] == "method" else None,
        )
    try:
        value: Any = wire_json.loads(text)
    except MalformedMessageError as exc:  # outside the wire rule
        raise FrameError(PARSE_ERROR, f"the frame is refused: {exc.message}") from None
    except ValueError as exc:
        raise FrameError(PARSE_ERROR, f"the frame is not JSON: {exc}") from None
    if not isinstance(value, dict | list):
        raise FrameError(
            INVALID_REQUEST, "a JSON-RPC message is an object (or a batch array of objects)"
        )
    if b"\n" in data or b"\r" in data:
        data = wire_json.dumps(value).encode("utf-8")
    return data + b"\n"


def leading_id(head: bytes) -> tuple[Any, str] | None:
    """``(id, next member)`` of a message that starts with its id, else ``None``."""
    match = _LEADING_ID.match(head)
    if match is None:
        return None
    try:
        return json.loads(match.group(1)), match.group(2).decode()
    except ValueError:
        return None


def response_id_of(head: bytes) -> Any:
    """The id of the response a message starts as, or ``None`` (not found, not a response)."""
    found = leading_id(head)
    return found[0] if found is not None and found[1] != "method" else None


def error_frame(code: int, message: str, request_id: Any = None) -> str:
    """A JSON-RPC 2.0 error response (``id`` null when the request is unknown)."""
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}},
        ensure_ascii=False,
        separators=(",", ":"),
    )


T = TypeVar("T")


class MessageQueue(Generic[T]):
    """A FIFO bounded by total bytes and by count; one item may exceed the byte bound.

    ``put`` waits while the queue is full (backpressure, nothing dropped); ``get``
    waits while it is empty and raises :class:`anyio.EndOfStream` once it was closed
    and drained. A consumer that took an item but could not deliver it (it was
    cancelled mid-send) gives it back with :meth:`put_back`, so the next consumer
    sends it and nothing is lost or reordered.
    """

    def __init__(self, *, max_bytes: int, max_items: int) -> None:
        self.max_bytes = max_bytes
        self.max_items = max_items
        self._items: deque[tuple[T, int]] = deque()
        self._bytes = 0
        self._closed = False
        self._changed: anyio.Event | None = None  # created only when someone waits

    def __len__(self) -> int:
        return len(self._items)

    @property
    def bytes(self) -> int:
        return self._bytes

    @property
    def closed(self) -> bool:
        return self._closed

    def _notify(self) -> None:
        changed, self._changed = self._changed, None
        if changed is not None:
            changed.set()

    async def _wait(self) -> None:
        if self._changed is None:
            self._changed = anyio.Event()
        await self._changed.wait()

    def _has_room(self, size: int) -> bool:
        if not self._items:
            return True
        return len(self._items) < self.max_items and self._bytes + size <= self.max_bytes

    async def put(self, item: T, size: int) -> None:
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._has_room(size):
                break
            await self._wait()
        self._items.append((item, size))
        self._bytes += size
        self._notify()

    def put_back(self, item: T, size: int) -> None:
        """Return an item taken by :meth:`get` to the front (it was not delivered)."""
        self._items.appendleft((item, size))
        self._bytes += size
        self._notify()

    async def get(self) -> T:
        item, _ = await self.get_sized()
        return item

    async def get_sized(self) -> tuple[T, int]:
        """The next item and the size it was put with."""
        while True:
            if self._items:
                entry = self._items.popleft()
                self._bytes -= entry[1]
                self._notify()
                return entry
            if self._closed:
                raise anyio.EndOfStream
            await self._wait()

    def close(self) -> None:
        """No more items; readers drain what is queued, then see the end."""
        self._closed = True
        self._notify()

    def clear(self) -> int:
        """Drop every queued item; return how many."""
        count = len(self._items)
        self._items.clear()
        self._bytes = 0
        self._notify()
        return count
