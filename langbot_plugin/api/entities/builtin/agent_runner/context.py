"""The context a runner's ``run(ctx)`` receives.

Built by the host for one run and frozen for it: the triggering event, the
conversation and people involved, the input, where output goes, what the run may
use, state, deadline and the runner's binding config. Unknown keys a newer host
adds are kept (as extra attributes) and dumped back.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel
from langbot_plugin.api.entities.builtin.agent_runner.context_access import ContextAccess
from langbot_plugin.api.entities.builtin.agent_runner.delivery import DeliveryContext
from langbot_plugin.api.entities.builtin.agent_runner.event import (
    ActorContext,
    AgentEventContext,
    ConversationContext,
    SubjectContext,
)
from langbot_plugin.api.entities.builtin.agent_runner.input import AgentInput
from langbot_plugin.api.entities.builtin.agent_runner.resources import AgentResources
from langbot_plugin.api.entities.builtin.agent_runner.runtime import AgentRuntimeContext
from langbot_plugin.api.entities.builtin.agent_runner.state import AgentRunState
from langbot_plugin.api.entities.builtin.agent_runner.trigger import AgentTrigger

__all__ = [
    "ActorContext",
    "AdapterContext",
    "AgentEventContext",
    "AgentInput",
    "AgentResources",
    "AgentRunContext",
    "AgentRunState",
    "AgentRuntimeContext",
    "AgentTrigger",
    "ContextAccess",
    "ConversationContext",
    "DeliveryContext",
    "SubjectContext",
]


class AdapterContext(HostContextModel):
    """Whatever the host's entry adapter wants the runner to see."""

    extra: dict[str, Any] = Field(default_factory=dict)


class AgentRunContext(HostContextModel):
    """Everything one run knows; ``run_id`` links results and API calls to it."""

    run_id: str
    trigger: AgentTrigger
    event: AgentEventContext
    conversation: ConversationContext | None = None
    actor: ActorContext | None = None
    subject: SubjectContext | None = None
    input: AgentInput
    delivery: DeliveryContext
    resources: AgentResources
    context: ContextAccess = Field(default_factory=ContextAccess)
    state: AgentRunState = Field(default_factory=AgentRunState)
    runtime: AgentRuntimeContext
    #: The runner's configuration in this agent binding (its config-schema values).
    config: dict[str, Any] = Field(default_factory=dict)
    adapter: AdapterContext | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
