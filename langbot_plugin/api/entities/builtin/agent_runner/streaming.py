"""Turning a model's incremental stream into ``message.delta`` results.

A streamed LLM answer arrives as chunks whose ``content`` is the *new* text; a
``message.delta`` result carries the *whole* answer so far. :class:`CumulativeText` and
:func:`cumulative_deltas` bridge the two (usage: ``docs/api-entities.md``, the
``AgentRunResult`` semantics).
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator

from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk

__all__ = ["CumulativeText", "chunk_text", "cumulative_deltas"]


def chunk_text(chunk: MessageChunk) -> str:
    """The text a chunk adds (its string content, or its text parts joined)."""
    content = chunk.content
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    return "".join(part.text or "" for part in content if part.type == "text")


class CumulativeText:
    """Accumulates incremental text and hands out cumulative chunks."""

    def __init__(self, role: str = "assistant") -> None:
        self.role = role
        self.text = ""
        self.count = 0

    def add(self, piece: str) -> str:
        """Append ``piece``; return the whole text so far."""
        self.text += piece
        self.count += 1
        return self.text

    def chunk(self, chunk: MessageChunk | str) -> MessageChunk:
        """Feed one incremental chunk (or plain text); return a chunk whose ``content``
        is the cumulative text, keeping the incoming chunk's other fields."""
        if isinstance(chunk, str):
            self.add(chunk)
            return MessageChunk(role=self.role, content=self.text, msg_sequence=self.count)
        self.add(chunk_text(chunk))
        return chunk.model_copy(
            update={"content": self.text, "all_content": self.text, "msg_sequence": self.count}
        )

    def message(self) -> Message:
        """The accumulated answer as a complete message."""
        return Message(role=self.role, content=self.text)

    def reset(self) -> None:
        """Start a new answer (for example after a tool-call turn)."""
        self.text = ""
        self.count = 0


async def cumulative_deltas(
    run_id: str, chunks: AsyncIterable[MessageChunk | str]
) -> AsyncIterator[AgentRunResult]:
    """``message.delta`` results carrying the cumulative text of ``chunks``.

    Chunks that add no text (tool-call fragments, usage-only items) are skipped.
    """
    text = CumulativeText()
    async for chunk in chunks:
        piece = chunk if isinstance(chunk, str) else chunk_text(chunk)
        if piece:
            yield AgentRunResult.message_delta(run_id, text.chunk(chunk))
