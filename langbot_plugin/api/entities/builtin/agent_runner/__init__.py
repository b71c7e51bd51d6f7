"""Agent-runner entities (Protocol v1): the run context a runner receives, the
results it yields, the manifest it declares, and the host APIs' answers.

Submodules: ``context`` (and ``context_binding``, what an active context calls),
``trigger``, ``event``, ``input``, ``delivery``, ``resources``, ``context_access``,
``state``, ``runtime``, ``result`` (and ``payloads``), ``streaming``, ``interaction``,
``manifest`` (``capabilities``, ``permissions``; ``manifest_v1`` and ``protocol_v1``:
what only seed 003's Protocol v1 declares), ``box``, ``transcript``,
``page_results``, ``steering``, ``run_ledger``, ``runtime_registry``, ``stats``,
``errors``, ``compat``. The same classes under their 0.7 names are in
:mod:`langbot_plugin.api.entities.builtin.runner`.

The names below are imported on first use (a process that only needs the run records
does not build every model of the package).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from langbot_plugin.api.entities._lazy import lazy_names

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.agent_runner.box import (
        BoxAcquireRequest,
        BoxBinding,
        BoxFile,
        BoxSession,
        BoxStatus,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.context import (
        AdapterContext,
        AgentRunContext,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.context_access import (
        ContextAccess,
        ContextAPICapabilities,
        InlineContextPolicy,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.context_binding import (
        ReplyStreamHandle,
        RunContextAPI,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.delivery import DeliveryContext
    from langbot_plugin.api.entities.builtin.agent_runner.errors import (
        AgentAPIError,
        AgentAPIException,
        PermissionDeniedError,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.event import (
        ActorContext,
        AgentEventContext,
        ConversationContext,
        RawEventRef,
        SubjectContext,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.input import AgentInput, InputAttachment
    from langbot_plugin.api.entities.builtin.agent_runner.interaction import (
        INTERACTION_REQUESTED_ACTION,
        INTERACTION_SUBMITTED_EVENT,
        InteractionAction,
        InteractionActionStyle,
        InteractionDeliveryCapabilities,
        InteractionField,
        InteractionFieldType,
        InteractionOption,
        InteractionRequest,
        InteractionSubmission,
        JSONValue,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.manifest import (
        AgentRunnerCapabilities,
        AgentRunnerManifest,
        AgentRunnerPermissions,
        DynamicFormItemSchema,
        I18nObject,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.manifest_v1 import (
        AgentRunnerContextPolicy,
        ProtocolV1Capabilities,
        ProtocolV1Manifest,
        ProtocolV1Permissions,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
        AgentEventRecord,
        EventPage,
        HistoryPage,
        HistorySearchResult,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.resources import (
        AgentResources,
        KnowledgeBaseResource,
        ModelResource,
        SkillResource,
        StorageResource,
        ToolResource,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.result import (
        ActionRequestedPayload,
        AgentRunResult,
        AgentRunResultType,
        MessageCompletedPayload,
        MessageDeltaPayload,
        ProcessorLogPayload,
        RunCompletedPayload,
        RunFailedPayload,
        StateUpdatedPayload,
        ToolCallCompletedPayload,
        ToolCallStartedPayload,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
        AgentRun,
        AgentRunEvent,
        AgentRunStatus,
        RunEventPage,
        RunPage,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.runtime import AgentRuntimeContext
    from langbot_plugin.api.entities.builtin.agent_runner.runtime_registry import (
        AgentRuntime,
        RuntimePage,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.state import (
        VALID_STATE_SCOPES,
        AgentRunState,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.stats import (
        RunnerStats,
        RunnerStatsPage,
        RunStats,
        RuntimeStats,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.steering import (
        SteeringInputItem,
        SteeringPullResult,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.streaming import (
        CumulativeText,
        cumulative_deltas,
    )
    from langbot_plugin.api.entities.builtin.agent_runner.transcript import TranscriptItem
    from langbot_plugin.api.entities.builtin.agent_runner.trigger import AgentTrigger
    from langbot_plugin.api.entities.builtin.provider.message import (
        LLMInvokeResult,
        LLMStreamEvent,
        LLMTokenUsage,
    )

__all__ = [
    "INTERACTION_REQUESTED_ACTION",
    "INTERACTION_SUBMITTED_EVENT",
    "VALID_STATE_SCOPES",
    "ActionRequestedPayload",
    "ActorContext",
    "AdapterContext",
    "AgentAPIError",
    "AgentAPIException",
    "AgentEventContext",
    "AgentEventRecord",
    "AgentInput",
    "AgentResources",
    "AgentRun",
    "AgentRunContext",
    "AgentRunEvent",
    "AgentRunResult",
    "AgentRunResultType",
    "AgentRunState",
    "AgentRunStatus",
    "AgentRunnerCapabilities",
    "AgentRunnerContextPolicy",
    "AgentRunnerManifest",
    "AgentRunnerPermissions",
    "AgentRuntime",
    "AgentRuntimeContext",
    "AgentTrigger",
    "BoxAcquireRequest",
    "BoxBinding",
    "BoxFile",
    "BoxSession",
    "BoxStatus",
    "ContextAPICapabilities",
    "ContextAccess",
    "ConversationContext",
    "CumulativeText",
    "DeliveryContext",
    "DynamicFormItemSchema",
    "EventPage",
    "HistoryPage",
    "HistorySearchResult",
    "I18nObject",
    "InlineContextPolicy",
    "InputAttachment",
    "InteractionAction",
    "InteractionActionStyle",
    "InteractionDeliveryCapabilities",
    "InteractionField",
    "InteractionFieldType",
    "InteractionOption",
    "InteractionRequest",
    "InteractionSubmission",
    "JSONValue",
    "KnowledgeBaseResource",
    "LLMInvokeResult",
    "LLMStreamEvent",
    "LLMTokenUsage",
    "MessageCompletedPayload",
    "MessageDeltaPayload",
    "ModelResource",
    "PermissionDeniedError",
    "ProcessorLogPayload",
    "ProtocolV1Capabilities",
    "ProtocolV1Manifest",
    "ProtocolV1Permissions",
    "RawEventRef",
    "ReplyStreamHandle",
    "RunCompletedPayload",
    "RunContextAPI",
    "RunEventPage",
    "RunFailedPayload",
    "RunPage",
    "RunStats",
    "RunnerStats",
    "RunnerStatsPage",
    "RuntimePage",
    "RuntimeStats",
    "SkillResource",
    "StateUpdatedPayload",
    "SteeringInputItem",
    "SteeringPullResult",
    "StorageResource",
    "SubjectContext",
    "ToolCallCompletedPayload",
    "ToolCallStartedPayload",
    "ToolResource",
    "TranscriptItem",
    "cumulative_deltas",
]

#: Where the names are defined (``.module``: a submodule of this package).
_HOMES: dict[str, str] = {
    ".result": (
        "ActionRequestedPayload AgentRunResult AgentRunResultType MessageCompletedPayload "
        "MessageDeltaPayload ProcessorLogPayload RunCompletedPayload RunFailedPayload "
        "StateUpdatedPayload ToolCallCompletedPayload ToolCallStartedPayload"
    ),
    ".event": "ActorContext AgentEventContext ConversationContext RawEventRef SubjectContext",
    ".context": "AdapterContext AgentRunContext",
    ".errors": "AgentAPIError AgentAPIException PermissionDeniedError",
    ".page_results": "AgentEventRecord EventPage HistoryPage HistorySearchResult",
    ".input": "AgentInput InputAttachment",
    ".resources": (
        "AgentResources KnowledgeBaseResource ModelResource SkillResource StorageResource "
        "ToolResource"
    ),
    ".run_ledger": "AgentRun AgentRunEvent AgentRunStatus RunEventPage RunPage",
    ".state": "AgentRunState VALID_STATE_SCOPES",
    ".manifest": (
        "AgentRunnerCapabilities AgentRunnerManifest AgentRunnerPermissions "
        "DynamicFormItemSchema I18nObject"
    ),
    ".manifest_v1": (
        "AgentRunnerContextPolicy ProtocolV1Capabilities ProtocolV1Manifest ProtocolV1Permissions"
    ),
    ".runtime_registry": "AgentRuntime RuntimePage",
    ".runtime": "AgentRuntimeContext",
    ".trigger": "AgentTrigger",
    ".box": "BoxAcquireRequest BoxBinding BoxFile BoxSession BoxStatus",
    ".context_access": "ContextAPICapabilities ContextAccess InlineContextPolicy",
    ".streaming": "CumulativeText cumulative_deltas",
    ".delivery": "DeliveryContext",
    ".interaction": (
        "INTERACTION_REQUESTED_ACTION INTERACTION_SUBMITTED_EVENT InteractionAction "
        "InteractionActionStyle InteractionDeliveryCapabilities InteractionField "
        "InteractionFieldType InteractionOption InteractionRequest InteractionSubmission "
        "JSONValue"
    ),
    "langbot_plugin.api.entities.builtin.provider.message": (
        "LLMInvokeResult LLMStreamEvent LLMTokenUsage"
    ),
    ".context_binding": "ReplyStreamHandle RunContextAPI",
    ".stats": "RunStats RunnerStats RunnerStatsPage RuntimeStats",
    ".steering": "SteeringInputItem SteeringPullResult",
    ".transcript": "TranscriptItem",
}

__getattr__ = lazy_names(__name__, _HOMES)
