"""0.7 path for the resources granted to a run (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``resources`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.resources import (
    AgentResources,
    KnowledgeBaseOperation,
    KnowledgeBaseResource,
    ModelOperation,
    ModelResource,
    SkillResource,
    StorageResource,
    ToolOperation,
    ToolResource,
)

__all__ = [
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
