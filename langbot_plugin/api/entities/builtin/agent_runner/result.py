"""What a runner yields: :class:`AgentRunResult` items, built with the factories.

What the host relies on (cumulative ``message.delta``, one terminal result, a final
message delivered once, unknown ``type`` strings kept) is ``docs/api-entities.md``'s
``AgentRunResult`` semantics. The wire form is ``model_dump(mode="json")``: ``run_id,
type, data, usage, sequence, timestamp``, nulls included.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, cast

from pydantic import BaseModel, BeforeValidator, Field

from langbot_plugin.api.entities.builtin.agent_runner.interaction import (
    INTERACTION_REQUESTED_ACTION,
    InteractionRequest,
)
from langbot_plugin.api.entities.builtin.agent_runner.payloads import (
    LOG_LEVELS,
    ActionRequestedPayload,
    LogLevel,
    MessageCompletedPayload,
    MessageDeltaPayload,
    ProcessorLogPayload,
    RunCompletedPayload,
    RunFailedPayload,
    StateUpdatedPayload,
    ToolCallCompletedPayload,
    ToolCallStartedPayload,
)
from langbot_plugin.api.entities.builtin.agent_runner.state import (
    STATE_SCOPE_LITERAL,
    VALID_STATE_SCOPES,
)
from langbot_plugin.api.entities.builtin.provider.message import (
    LLMTokenUsage,
    Message,
    MessageChunk,
)

__all__ = [
    "INTERACTION_REQUESTED_ACTION",
    "STATE_SCOPE_LITERAL",
    "TERMINAL_RESULT_TYPES",
    "VALID_STATE_SCOPES",
    "ActionRequestedPayload",
    "AgentRunResult",
    "AgentRunResultType",
    "InteractionRequest",
    "LLMTokenUsage",
    "Message",
    "MessageChunk",
    "MessageCompletedPayload",
    "MessageDeltaPayload",
    "ProcessorLogPayload",
    "RunCompletedPayload",
    "RunFailedPayload",
    "StateUpdatedPayload",
    "ToolCallCompletedPayload",
    "ToolCallStartedPayload",
]


class AgentRunResultType(str, enum.Enum):  # noqa: UP042 -- str() as in the reference
    """The result types this SDK knows."""

    MESSAGE_DELTA = "message.delta"
    MESSAGE_COMPLETED = "message.completed"
    TOOL_CALL_STARTED = "tool.call.started"
    TOOL_CALL_COMPLETED = "tool.call.completed"
    STATE_UPDATED = "state.updated"
    ACTION_REQUESTED = "action.requested"
    RUN_COMPLETED = "run.completed"
    RUN_FAILED = "run.failed"
    #: A line for the host's log of the run (0.7 hosts; 0.5 hosts ignore the type).
    PROCESSOR_LOG = "processor.log"


#: Types that end a run.
TERMINAL_RESULT_TYPES = frozenset({AgentRunResultType.RUN_COMPLETED, AgentRunResultType.RUN_FAILED})

_KNOWN_TYPES = {member.value: member for member in AgentRunResultType}


def _known_type(value: Any) -> Any:
    if isinstance(value, str) and not isinstance(value, AgentRunResultType):
        return _KNOWN_TYPES.get(value, value)
    return value


def _usage(value: LLMTokenUsage | dict[str, Any] | None) -> LLMTokenUsage | None:
    if value is None or isinstance(value, LLMTokenUsage):
        return value
    return LLMTokenUsage.model_validate(value)


class AgentRunResult(BaseModel):
    """One result of a run. ``usage`` is optional: when known, attach the aggregate
    to the terminal result (missing means unknown, not zero)."""

    run_id: str
    type: Annotated[AgentRunResultType | str, BeforeValidator(_known_type)]
    data: dict[str, Any] = Field(default_factory=dict)
    usage: LLMTokenUsage | None = None
    sequence: int | None = None
    #: Epoch seconds.
    timestamp: int | None = None

    @property
    def is_terminal(self) -> bool:
        """Whether this result ends the run (``run.completed`` or ``run.failed``)."""
        return self.type in TERMINAL_RESULT_TYPES

    @classmethod
    def _of(
        cls,
        run_id: str,
        kind: AgentRunResultType,
        data: dict[str, Any],
        *,
        usage: LLMTokenUsage | dict[str, Any] | None = None,
        sequence: int | None,
        timestamp: int | None,
    ) -> AgentRunResult:
        return cls(
            run_id=run_id,
            type=kind,
            data=data,
            usage=_usage(usage),
            sequence=sequence,
            timestamp=timestamp,
        )

    @classmethod
    def message_delta(
        cls,
        run_id: str,
        chunk: MessageChunk,
        *,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """Stream the answer so far; ``chunk.content`` is the cumulative text."""
        data = MessageDeltaPayload(chunk=chunk).model_dump(mode="json")
        kind = AgentRunResultType.MESSAGE_DELTA
        return cls._of(run_id, kind, data, sequence=sequence, timestamp=timestamp)

    @classmethod
    def message_completed(
        cls,
        run_id: str,
        message: Message,
        *,
        file_ids: list[str] | None = None,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """A complete message; ``file_ids`` (exported Box files, see
        ``export_box_files``) are delivered with it by a 0.7 host."""
        payload = MessageCompletedPayload(message=message, file_ids=file_ids or [])
        data = payload.model_dump(mode="json", exclude=None if file_ids else {"file_ids"})
        kind = AgentRunResultType.MESSAGE_COMPLETED
        return cls._of(run_id, kind, data, sequence=sequence, timestamp=timestamp)

    @classmethod
    def tool_call_started(
        cls,
        run_id: str,
        tool_call_id: str,
        tool_name: str,
        parameters: dict[str, Any],
        *,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """A tool call began (recorded by the host for telemetry)."""
        payload = ToolCallStartedPayload(
            tool_call_id=tool_call_id, tool_name=tool_name, parameters=parameters
        )
        kind = AgentRunResultType.TOOL_CALL_STARTED
        data = payload.model_dump(mode="json")
        return cls._of(run_id, kind, data, sequence=sequence, timestamp=timestamp)

    @classmethod
    def tool_call_completed(
        cls,
        run_id: str,
        tool_call_id: str,
        tool_name: str,
        result: dict[str, Any] | None = None,
        error: str | None = None,
        *,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """A tool call ended with ``result`` or ``error``."""
        payload = ToolCallCompletedPayload(
            tool_call_id=tool_call_id, tool_name=tool_name, result=result, error=error
        )
        kind = AgentRunResultType.TOOL_CALL_COMPLETED
        data = payload.model_dump(mode="json")
        return cls._of(run_id, kind, data, sequence=sequence, timestamp=timestamp)

    @classmethod
    def state_updated(
        cls,
        run_id: str,
        key: str,
        value: Any,
        scope: STATE_SCOPE_LITERAL,
        *,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """Ask the host to persist ``value`` (JSON) under ``key`` in ``scope``.

        :class:`ValueError` if ``scope`` is not one of :data:`VALID_STATE_SCOPES`.
        """
        if scope not in VALID_STATE_SCOPES:
            raise ValueError(
                f"Invalid scope '{scope}'. Must be one of: {', '.join(VALID_STATE_SCOPES)}"
            )
        data = StateUpdatedPayload(scope=scope, key=key, value=value).model_dump(mode="json")
        kind = AgentRunResultType.STATE_UPDATED
        return cls._of(run_id, kind, data, sequence=sequence, timestamp=timestamp)

    @classmethod
    def run_completed(
        cls,
        run_id: str,
        message: Message | None = None,
        finish_reason: str = "stop",
        *,
        usage: LLMTokenUsage | dict[str, Any] | None = None,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """End the run successfully, optionally with the final message (its ``None``
        fields are left out of the payload)."""
        payload = RunCompletedPayload(finish_reason=finish_reason, message=message)
        data = payload.model_dump(mode="json", exclude_none=True)
        kind = AgentRunResultType.RUN_COMPLETED
        return cls._of(run_id, kind, data, usage=usage, sequence=sequence, timestamp=timestamp)

    @classmethod
    def run_failed(
        cls,
        run_id: str,
        error: str,
        code: str | None = None,
        retryable: bool = False,
        *,
        usage: LLMTokenUsage | dict[str, Any] | None = None,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """End the run with an error (``code`` defaults to ``runner.error``)."""
        payload = RunFailedPayload(error=error, code=code or "runner.error", retryable=retryable)
        data = payload.model_dump(mode="json")
        kind = AgentRunResultType.RUN_FAILED
        return cls._of(run_id, kind, data, usage=usage, sequence=sequence, timestamp=timestamp)

    @classmethod
    def action_requested(
        cls,
        run_id: str,
        action: str,
        target: dict[str, Any] | None = None,
        payload: dict[str, Any] | None = None,
        *,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """Ask the host to perform a platform action."""
        body = ActionRequestedPayload(action=action, target=target, payload=payload)
        kind = AgentRunResultType.ACTION_REQUESTED
        data = body.model_dump(mode="json")
        return cls._of(run_id, kind, data, sequence=sequence, timestamp=timestamp)

    @classmethod
    def interaction_requested(
        cls,
        run_id: str,
        request: InteractionRequest | dict[str, Any],
        *,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """Ask the host to show an interaction on the run's delivery target (an
        ``action.requested`` with action ``interaction.requested``)."""
        validated = InteractionRequest.model_validate(request)
        return cls.action_requested(
            run_id,
            INTERACTION_REQUESTED_ACTION,
            payload=validated.model_dump(mode="json"),
            sequence=sequence,
            timestamp=timestamp,
        )

    @classmethod
    def processor_log(
        cls,
        run_id: str,
        text: str,
        level: LogLevel | str = "info",
        *,
        sequence: int | None = None,
        timestamp: int | None = None,
    ) -> AgentRunResult:
        """A line for the host's log of the run (``level``: debug, info, warning, error);
        never shown on the platform. :class:`ValueError` for an unknown level."""
        if level not in LOG_LEVELS:
            known = ", ".join(LOG_LEVELS)
            raise ValueError(f"Invalid log level {level!r}. Must be one of: {known}")
        payload = ProcessorLogPayload(text=text, level=cast(LogLevel, level))
        data = payload.model_dump(mode="json")
        kind = AgentRunResultType.PROCESSOR_LOG
        return cls._of(run_id, kind, data, sequence=sequence, timestamp=timestamp)
