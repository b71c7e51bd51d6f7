"""What a runner declares about itself: capabilities, requested permissions and the
configuration form the host renders.

The declarations are strict (unknown keys are rejected) because the runner's author
writes them. :class:`AgentRunnerManifest` is the 0.5 descriptor;
:class:`RunnerManifest` adds the 0.7 fields.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.entities.builtin.agent_runner.operations import (
    KnowledgeBaseOperation,
    ModelOperation,
    ToolOperation,
)

__all__ = [
    "AgentRunnerCapabilities",
    "AgentRunnerManifest",
    "AgentRunnerPermissions",
    "DynamicFormItemSchema",
    "I18nObject",
    "RunnerManifest",
]

#: Locale code -> text, e.g. ``{"en_US": "Echo", "zh_Hans": "回声"}``.
I18nObject = dict[str, str]


class DynamicFormItemSchema(BaseModel):
    """One field of a configuration form (``type`` such as ``text``, ``select``,
    ``llm-model-selector``); extra keys are kept for the form renderer."""

    model_config = ConfigDict(extra="allow")

    type: str
    name: str
    label: I18nObject = Field(default_factory=dict)
    description: I18nObject | None = None
    required: bool = False
    default: Any = None
    options: list[dict[str, Any]] | None = None
    #: A ``select`` also accepts a value typed by the user beside its options.
    allow_custom: bool = False


class _Declared(BaseModel):
    model_config = ConfigDict(extra="forbid")


class AgentRunnerCapabilities(_Declared):
    """What the runner can do."""

    #: Emits ``message.delta`` results.
    streaming: bool = False
    #: Uses the host's tool detail/call APIs.
    tool_calling: bool = False
    #: Uses knowledge-base retrieval.
    knowledge_retrieval: bool = False
    #: Accepts non-text input contents and attachments.
    multimodal_input: bool = False
    #: Wants host-provided skill-authoring tools.
    skill_authoring: bool = False
    #: Can be cancelled or interrupted.
    interrupt: bool = False
    #: Pulls steering (follow-up) input between turns.
    steering: bool = False
    #: Requests structured interactions.
    interactions: bool = False


class AgentRunnerPermissions(_Declared):
    """Upper bound of the host resources the runner may be granted, per kind.

    The host intersects these with the binding's policy for each run.
    """

    models: list[ModelOperation] = Field(default_factory=list)
    tools: list[ToolOperation] = Field(default_factory=list)
    knowledge_bases: list[KnowledgeBaseOperation] = Field(default_factory=list)
    history: list[Literal["page", "search"]] = Field(default_factory=list)
    events: list[Literal["get", "page"]] = Field(default_factory=list)
    storage: list[Literal["plugin", "workspace"]] = Field(default_factory=list)
    interactions: list[Literal["request"]] = Field(default_factory=list)


class AgentRunnerManifest(_Declared):
    """The stable descriptor of a runner (``id``: ``plugin:author/plugin/runner``)."""

    id: str
    name: str
    label: I18nObject
    description: I18nObject | None = None
    capabilities: AgentRunnerCapabilities = Field(default_factory=AgentRunnerCapabilities)
    permissions: AgentRunnerPermissions = Field(default_factory=AgentRunnerPermissions)
    config_schema: list[DynamicFormItemSchema] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


class RunnerManifest(AgentRunnerManifest):
    """The 0.7 descriptor: adds what the component is used for (``agent`` and/or
    ``event``) and which event types it accepts."""

    component_kind: Literal["Runner"] = "Runner"
    usages: list[Literal["agent", "event"]] = Field(min_length=1)
    supported_event_patterns: list[str] = Field(default_factory=lambda: ["*"])
