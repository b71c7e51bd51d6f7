"""Follow-up input a running runner pulls between turns ("steering")."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.event import (
    ActorContext,
    AgentEventContext,
    ConversationContext,
    SubjectContext,
)
from langbot_plugin.api.entities.builtin.agent_runner.input import AgentInput

__all__ = ["SteeringInputItem", "SteeringPullResult"]


class SteeringInputItem(BaseModel):
    """A message the host claimed for the active run."""

    model_config = HOST_RESPONSE_MODEL_CONFIG

    claimed_run_id: str
    runner_id: str
    claimed_at: int | None = None
    event: AgentEventContext
    input: AgentInput
    conversation: ConversationContext | None = None
    actor: ActorContext | None = None
    subject: SubjectContext | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class SteeringPullResult(BaseModel):
    """The pulled items, in the host's claim order."""

    model_config = HOST_RESPONSE_MODEL_CONFIG

    items: list[SteeringInputItem] = Field(default_factory=list)
