"""Scripted stand-ins for a host's models and tools, for tests and local runs.

:class:`ScriptedModel` answers LLM calls from a script; :class:`HostTool` is a tool
the local host exposes to plugins and runners (``call_tool``, ``get_tool_detail``).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

__all__ = ["HostTool", "Reply", "ScriptedModel"]

Reply = str | dict[str, Any]


def _message(reply: Reply) -> dict[str, Any]:
    base: dict[str, Any] = {
        "role": "assistant",
        "name": None,
        "content": None,
        "tool_calls": None,
        "tool_call_id": None,
        "resp_message_id": None,
        "provider_specific_fields": None,
    }
    if isinstance(reply, str):
        return {**base, "content": reply}
    return {**base, **reply}


class ScriptedModel:
    """An LLM that answers from a script.

    ``replies`` is a list consumed in order (the last one repeats), each a text or a
    message dict (for example one with ``tool_calls``), or a function of the request's
    messages returning one.
    """

    def __init__(
        self,
        replies: list[Reply] | Callable[[list[dict[str, Any]]], Reply] | None = None,
        *,
        model_uuid: str = "scripted-model",
        chunk_chars: int = 8,
    ) -> None:
        self.model_uuid = model_uuid
        self.chunk_chars = chunk_chars
        self._replies = replies if replies is not None else self._echo
        self._index = 0
        self.requests: list[list[dict[str, Any]]] = []

    @staticmethod
    def _echo(messages: list[dict[str, Any]]) -> Reply:
        last = messages[-1].get("content") if messages else ""
        return f"scripted reply to: {last}"

    def answer(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        self.requests.append(messages)
        if callable(self._replies):
            return _message(self._replies(messages))
        script = self._replies
        reply = script[min(self._index, len(script) - 1)]
        self._index += 1
        return _message(reply)

    def chunks(self, message: dict[str, Any]) -> list[dict[str, Any]]:
        """The message cut into incremental stream chunks (the last one is final)."""
        text = str(message.get("content") or "")
        pieces = [
            text[i : i + self.chunk_chars] for i in range(0, len(text), self.chunk_chars)
        ] or [""]
        chunks = [
            {**message, "content": piece, "tool_calls": None, "is_final": False} for piece in pieces
        ]
        chunks[-1] = {**chunks[-1], "tool_calls": message.get("tool_calls"), "is_final": True}
        return chunks

    @staticmethod
    def count_tokens(messages: list[dict[str, Any]]) -> int:
        """A deterministic token count: whitespace-separated words of the text."""
        total = 0
        for message in messages:
            content = message.get("content")
            if isinstance(content, list):
                content = " ".join(str(p.get("text") or "") for p in content if isinstance(p, dict))
            total += len(str(content or "").split())
        return total


ToolFunction = Callable[[dict[str, Any]], Any | Awaitable[Any]]


@dataclass
class HostTool:
    """A tool served by the local host: ``function(parameters)`` returns its result."""

    name: str
    function: ToolFunction
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    calls: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])

    async def call(self, parameters: dict[str, Any]) -> Any:
        self.calls.append(parameters)
        result = self.function(parameters)
        if inspect.isawaitable(result):
            result = await result
        return result

    def detail(self) -> dict[str, Any]:
        """What ``get_tool_detail`` answers under ``tool``."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}
