"""What the host granted a run: models, tools, knowledge bases, skills, storage.

Each model, tool and knowledge base lists the ``operations`` granted on it. An
empty list grants nothing by itself; the run API then falls back to the operations
the runner's manifest declares (see
:class:`~langbot_plugin.api.proxies.agent_run.AgentRunAPIProxy`), never to "all".
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel
from langbot_plugin.api.entities.builtin.agent_runner.operations import (
    KnowledgeBaseOperation,
    ModelOperation,
    ToolOperation,
)
from langbot_plugin.api.entities.builtin.agent_runner.protocol_v1 import FileResource

#: The host's context tool that answers on the run's own event (a reply, its files);
#: a run is granted it like any tool.
EVENT_REPLY_TOOL = "event_reply"

__all__ = [
    "EVENT_REPLY_TOOL",
    "AgentResources",
    "KnowledgeBaseOperation",
    "KnowledgeBaseResource",
    "ModelOperation",
    "ModelResource",
    "SkillResource",
    "StorageResource",
    "ToolOperation",
    "ToolResource",
]


class ModelResource(HostContextModel):
    """A model the run may use."""

    model_id: str
    model_type: str | None = None
    provider: str | None = None
    operations: list[ModelOperation | str] = Field(default_factory=list)


class ToolResource(HostContextModel):
    """A tool the run may use; ``parameters`` is its JSON schema when the host inlined it."""

    tool_name: str
    tool_type: str | None = None
    description: str | None = None
    operations: list[ToolOperation | str] = Field(default_factory=list)
    parameters: dict[str, Any] | None = None


class KnowledgeBaseResource(HostContextModel):
    """A knowledge base the run may use."""

    kb_id: str
    kb_name: str | None = None
    kb_type: str | None = None
    operations: list[KnowledgeBaseOperation | str] = Field(default_factory=list)


class SkillResource(HostContextModel):
    """A skill available to the run."""

    skill_name: str
    display_name: str | None = None
    description: str | None = None


class StorageResource(HostContextModel):
    """Which storage areas the run may use."""

    plugin_storage: bool = False
    workspace_storage: bool = False

    @property
    def binding_storage(self) -> bool:
        """Protocol v1: the ``binding`` area (only a host that sends
        ``binding_storage: true`` grants it; the released host never does)."""
        return (self.model_extra or {}).get("binding_storage") is True


class AgentResources(HostContextModel):
    """Everything granted to the run."""

    models: list[ModelResource] = Field(default_factory=list)
    tools: list[ToolResource] = Field(default_factory=list)
    knowledge_bases: list[KnowledgeBaseResource] = Field(default_factory=list)
    skills: list[SkillResource] = Field(default_factory=list)
    storage: StorageResource = Field(default_factory=StorageResource)
    platform_capabilities: dict[str, Any] = Field(default_factory=dict)

    @property
    def files(self) -> list[FileResource]:
        """Protocol v1: files the run may read (empty unless the host sends ``files``)."""
        raw = (self.model_extra or {}).get("files")
        items: list[Any] = raw if isinstance(raw, list) else []  # pyright: ignore[reportUnknownVariableType]
        return [FileResource.model_validate(item) for item in items]
