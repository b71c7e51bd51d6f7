"""The ``data`` of each result type: what :class:`~.result.AgentRunResult`'s factories
build and what the host validates (every payload rejects unknown keys)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.entities.builtin.agent_runner.state import STATE_SCOPE_LITERAL
from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk

__all__ = [
    "LOG_LEVELS",
    "ActionRequestedPayload",
    "LogLevel",
    "MessageCompletedPayload",
    "MessageDeltaPayload",
    "ProcessorLogPayload",
    "RunCompletedPayload",
    "RunFailedPayload",
    "StateUpdatedPayload",
    "ToolCallCompletedPayload",
    "ToolCallStartedPayload",
]

#: Levels of a ``processor.log`` line.
LogLevel = Literal["debug", "info", "warning", "error"]
LOG_LEVELS: tuple[str, ...] = ("debug", "info", "warning", "error")


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MessageDeltaPayload(_Payload):
    """``message.delta``: the answer so far (cumulative)."""

    chunk: MessageChunk


class MessageCompletedPayload(_Payload):
    """``message.completed``: a complete message, and the ids of exported Box files to
    send with it (0.7; left out of the wire form when empty, which 0.5 hosts need)."""

    message: Message
    file_ids: list[str] = Field(default_factory=list, max_length=100)


class ToolCallStartedPayload(_Payload):
    """``tool.call.started``."""

    tool_call_id: str
    tool_name: str
    parameters: dict[str, Any] = Field(default_factory=dict)


class ToolCallCompletedPayload(_Payload):
    """``tool.call.completed``: ``result`` or ``error``."""

    tool_call_id: str
    tool_name: str
    result: dict[str, Any] | None = None
    error: str | None = None


class StateUpdatedPayload(_Payload):
    """``state.updated``: persist ``value`` under ``key`` in ``scope``."""

    scope: STATE_SCOPE_LITERAL
    key: str
    value: Any


class RunCompletedPayload(_Payload):
    """``run.completed``, optionally with the final message."""

    finish_reason: str = "stop"
    message: Message | None = None


class RunFailedPayload(_Payload):
    """``run.failed``: ``code`` such as ``runner.error``, ``runner.timeout``, ``cancelled``."""

    error: str
    code: str = "runner.error"
    retryable: bool = False


class ActionRequestedPayload(_Payload):
    """``action.requested``: ask the host to perform ``action`` (host policy decides)."""

    action: str
    target: dict[str, Any] | None = None
    payload: dict[str, Any] | None = None


class ProcessorLogPayload(_Payload):
    """``processor.log``: a line for the host's log of the run; never a platform message."""

    text: str = Field(max_length=65536)
    level: LogLevel = "info"
