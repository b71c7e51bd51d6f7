from langbot_plugin.api.definition.components.knowledge_engine.engine import (
    KnowledgeEngine,
    KnowledgeEngineCapability,
)

__all__ = ["KnowledgeEngine", "KnowledgeEngineCapability"]
