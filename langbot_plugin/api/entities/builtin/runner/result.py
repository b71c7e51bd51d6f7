"""0.7 path for what a runner yields (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``result`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.result import (
    INTERACTION_REQUESTED_ACTION,
    STATE_SCOPE_LITERAL,
    TERMINAL_RESULT_TYPES,
    VALID_STATE_SCOPES,
    ActionRequestedPayload,
    AgentRunResult,
    AgentRunResultType,
    InteractionRequest,
    LLMTokenUsage,
    Message,
    MessageChunk,
    MessageCompletedPayload,
    MessageDeltaPayload,
    ProcessorLogPayload,
    RunCompletedPayload,
    RunFailedPayload,
    StateUpdatedPayload,
    ToolCallCompletedPayload,
    ToolCallStartedPayload,
)

RunnerResult = AgentRunResult
RunnerResultType = AgentRunResultType

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
    "RunnerResult",
    "RunnerResultType",
    "StateUpdatedPayload",
    "ToolCallCompletedPayload",
    "ToolCallStartedPayload",
]
