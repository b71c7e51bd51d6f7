"""0.7 path for the event that triggered a run (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``event`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.event import (
    ActorContext,
    AgentEventContext,
    ConversationContext,
    RawEventRef,
    SubjectContext,
)

__all__ = [
    "ActorContext",
    "AgentEventContext",
    "ConversationContext",
    "RawEventRef",
    "SubjectContext",
]
