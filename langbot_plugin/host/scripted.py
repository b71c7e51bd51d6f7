"""Scripted stand-ins for a host's models and tools, for tests and local runs.

:class:`HostModel` is what the local host asks of a model (an answer, or a stream of
chunks); :class:`ScriptedModel` answers from a script; :class:`HostTool` is a tool
the local host exposes to plugins and runners (``call_tool``, ``get_tool_detail``).
"""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = ["HostModel", "HostTool", "Reply", "ScriptedModel"]

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


class HostModel(Protocol):
    """A model the local host serves: ``invoke_llm`` asks :meth:`invoke`,
    ``invoke_llm_stream`` iterates :meth:`stream`.

    ``messages`` and ``tools`` are JSON (the ``messages`` and ``funcs`` of the call).
    :meth:`invoke` returns the assistant message and the usage (or ``None``);
    :meth:`stream` yields ``{"chunk": ...}`` items (the last chunk has
    ``is_final: true``) and optionally a ``{"usage": ...}`` item.
    """

    model_uuid: str

    async def invoke(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]: ...

    def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[dict[str, Any]]: ...


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

    async def invoke(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """:class:`HostModel`: the next reply, with a word-count usage."""
        message = self.answer(messages)
        words = len(str(message.get("content") or "").split())
        return message, {"prompt_tokens": 1, "completion_tokens": words, "total_tokens": words + 1}

    async def stream(
        self, messages: list[dict[str, Any]], tools: list[dict[str, Any]]
    ) -> AsyncIterator[dict[str, Any]]:
        """:class:`HostModel`: the next reply, cut into :meth:`chunks`."""
        for chunk in self.chunks(self.answer(messages)):
            yield {"chunk": chunk}

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
#: A tool function told which run calls it: ``function(run_id, parameters)``.
RunToolFunction = Callable[[str, dict[str, Any]], Any | Awaitable[Any]]


@dataclass
class HostTool:
    """A tool served by the local host: ``function(parameters)`` returns its result;
    ``run_function(run_id, parameters)``, when given, answers the calls a run makes (a
    sandbox tool runs in that run's Box, with that run's artifact mounts)."""

    name: str
    function: ToolFunction
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    calls: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    run_function: RunToolFunction | None = None

    async def call(self, parameters: dict[str, Any], run_id: str | None = None) -> Any:
        self.calls.append(parameters)
        if run_id is not None and self.run_function is not None:
            result = self.run_function(run_id, parameters)
        else:
            result = self.function(parameters)
        if inspect.isawaitable(result):
            result = await result
        return result

    def detail(self) -> dict[str, Any]:
        """What ``get_tool_detail`` answers under ``tool``."""
        return {"name": self.name, "description": self.description, "parameters": self.parameters}
