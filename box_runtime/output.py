"""Bounded output: what the Box keeps of a stream, and how a cut is marked.

:class:`OutputCollector` keeps the first ``head_ratio`` and the last part of a stream
within a byte budget while the stream flows; a managed process's stderr preview keeps
only its last part. A cut text ends with the reference Box's marker, the only sign of a
cut the released host reads (``... [raw output clipped at N bytes, M bytes
discarded]``), and says where head and tail meet how many bytes are missing there
(docs/box.md, *Security model*, "Output").
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CollectedOutput", "OutputCollector", "clip_marker", "clipped_text"]


def clip_marker(limit: int, total: int) -> str:
    """The last line of a text cut at ``limit`` bytes out of ``total``."""
    return f"\n... [raw output clipped at {limit} bytes, {max(0, total - limit)} bytes discarded]"


def clipped_text(head: bytes, tail: bytes, limit: int, total: int) -> str:
    """``head``, a gap line, ``tail`` and the clip marker: the text of a cut stream.

    ``head`` and ``tail`` are what was kept of ``total`` bytes under ``limit``; a UTF-8
    character cut at either edge is dropped, never shown half.
    """
    head = _trim_incomplete_tail(head)
    tail = _trim_incomplete_head(tail)
    text = head.decode("utf-8", errors="replace")
    if tail:
        gap = total - len(head) - len(tail)
        lead = "\n" if head else ""
        text += f"{lead}... [{gap} bytes discarded here] ...\n"
        text += tail.decode("utf-8", errors="replace")
    return text + clip_marker(limit, total)


def _trim_incomplete_tail(data: bytes) -> bytes:
    """Drop a UTF-8 sequence cut at the end of ``data``."""
    for back in range(1, min(4, len(data)) + 1):
        byte = data[-back]
        if byte & 0xC0 == 0x80:  # continuation byte: keep looking for the lead byte
            continue
        if byte & 0xE0 == 0xC0:
            needed = 2
        elif byte & 0xF0 == 0xE0:
            needed = 3
        elif byte & 0xF8 == 0xF0:
            needed = 4
        else:
            needed = 1
        return data[:-back] if needed > back else data
    return data


def _trim_incomplete_head(data: bytes) -> bytes:
    """Drop continuation bytes at the start of ``data`` (the rest of a cut sequence)."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:]


@dataclass(slots=True)
class CollectedOutput:
    """A stream's kept text, whether bytes were cut, and its full size in bytes."""

    text: str
    truncated: bool
    total_bytes: int


class OutputCollector:
    """Keeps the head and tail of a byte stream within ``limit`` bytes while it flows."""

    __slots__ = ("_head", "_tail", "head_limit", "limit", "tail_limit", "total")

    def __init__(self, limit: int, head_ratio: float = 0.6) -> None:
        if limit < 0 or not 0.0 <= head_ratio <= 1.0:
            raise ValueError("limit must be >= 0 and head_ratio within [0, 1]")
        self.limit = limit
        self.head_limit = int(limit * head_ratio)
        self.tail_limit = limit - self.head_limit
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, data: bytes | bytearray | memoryview) -> None:
        size = len(data)
        if not size:
            return
        self.total += size
        view = memoryview(data)
        room = self.head_limit - len(self._head)
        if room > 0:
            self._head += view[:room]
            view = view[room:]
        if len(view) and self.tail_limit:
            if len(view) >= self.tail_limit:
                self._tail[:] = view[len(view) - self.tail_limit :]
            else:
                self._tail += view
                # Trim in batches, not on every feed, so a long stream stays linear.
                if len(self._tail) > 2 * self.tail_limit:
                    del self._tail[: len(self._tail) - self.tail_limit]

    def result(self) -> CollectedOutput:
        tail = bytes(self._tail[-self.tail_limit :]) if self.tail_limit else b""
        if self.total <= self.limit:
            return CollectedOutput(
                (bytes(self._head) + tail).decode("utf-8", errors="replace"), False, self.total
            )
        return CollectedOutput(
            clipped_text(bytes(self._head), tail, self.limit, self.total), True, self.total
        )
