"""Visible truncation of oversized messages: cut, marked, never dropped.

The reference host silently discarded a final message over 1 MiB. Here the content
(the UTF-8 bytes of the string, or the JSON of each part) keeps its head and ends with
a marker; later parts are left out and counted in it, and a streamed chunk's
``all_content`` is cut the same way::

    <first bytes of the answer>
    [truncated by the host: the message had 3145728 bytes, 1048576 are shown]
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from typing import Any, TypeVar

from langbot_plugin.api.entities.builtin.provider.message import (
    ContentElement,
    Message,
    MessageChunk,
)

__all__ = ["DEFAULT_MESSAGE_LIMIT", "Truncation", "truncate_message", "truncate_text"]

#: Content bytes a single message may carry before it is cut (the reference's 1 MiB).
DEFAULT_MESSAGE_LIMIT = 1024 * 1024

M = TypeVar("M", Message, MessageChunk)


@dataclass(frozen=True, slots=True)
class Truncation:
    """How a message was cut: its original content size, the limit, dropped parts."""

    original_bytes: int
    limit_bytes: int
    dropped_parts: int = 0

    def marker(self) -> str:
        dropped = f", {self.dropped_parts} more part(s) left out" if self.dropped_parts else ""
        return (
            f"\n\n[truncated by the host: the message had {self.original_bytes} bytes, "
            f"{self.limit_bytes} are shown{dropped}]"
        )

    def to_dict(self) -> dict[str, int]:
        return asdict(self)


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


def _head(text: str, budget: int) -> str:
    """The longest prefix of ``text`` within ``budget`` UTF-8 bytes (never splits a char)."""
    return text.encode("utf-8")[: max(budget, 0)].decode("utf-8", errors="ignore")


def truncate_text(text: str, limit: int) -> tuple[str, Truncation | None]:
    """``text`` if within ``limit`` bytes, else its head plus the marker."""
    size = _size(text)
    if size <= limit:
        return text, None
    info = Truncation(original_bytes=size, limit_bytes=limit)
    return _head(text, limit) + info.marker(), info


def _part_size(part: ContentElement) -> int:
    return _size(json.dumps(part.model_dump(mode="json", exclude_none=True), ensure_ascii=False))


def _parts(
    parts: list[ContentElement], limit: int
) -> tuple[list[ContentElement], Truncation | None]:
    sizes = [_part_size(p) if p.type != "text" else _size(p.text or "") for p in parts]
    total = sum(sizes)
    if total <= limit:
        return parts, None
    kept: list[ContentElement] = []
    used = 0
    for index, (part, size) in enumerate(zip(parts, sizes, strict=True)):
        if used + size <= limit:
            kept.append(part)
            used += size
            continue
        first_left_out = index
        if part.type == "text" and used < limit:
            kept.append(part.model_copy(update={"text": _head(part.text or "", limit - used)}))
            first_left_out = index + 1
        info = Truncation(
            original_bytes=total, limit_bytes=limit, dropped_parts=len(parts) - first_left_out
        )
        kept.append(ContentElement(type="text", text=info.marker()))
        return kept, info
    raise AssertionError("unreachable: the parts fit")  # pragma: no cover


def truncate_message(message: M, limit: int = DEFAULT_MESSAGE_LIMIT) -> tuple[M, Truncation | None]:
    """``message`` with its content (and a chunk's ``all_content``) cut to ``limit``."""
    update: dict[str, Any] = {}
    info: Truncation | None = None
    content = message.content
    if isinstance(content, str):
        update["content"], info = truncate_text(content, limit)
    elif isinstance(content, list):
        update["content"], info = _parts(content, limit)
    if isinstance(message, MessageChunk) and message.all_content is not None:
        update["all_content"], cut = truncate_text(message.all_content, limit)
        info = info or cut
    if info is None:
        return message, None
    return message.model_copy(update=update), info
