"""0.7 path for follow-up input of an active run (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``steering`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.event import (
    ActorContext,
    AgentEventContext,
    ConversationContext,
    SubjectContext,
)
from langbot_plugin.api.entities.builtin.agent_runner.input import AgentInput
from langbot_plugin.api.entities.builtin.agent_runner.steering import (
    SteeringInputItem,
    SteeringPullResult,
)

__all__ = [
    "HOST_RESPONSE_MODEL_CONFIG",
    "ActorContext",
    "AgentEventContext",
    "AgentInput",
    "ConversationContext",
    "SteeringInputItem",
    "SteeringPullResult",
    "SubjectContext",
]
