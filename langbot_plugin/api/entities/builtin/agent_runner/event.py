"""The event that triggered a run, and who and what it concerns."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel

__all__ = [
    "ActorContext",
    "AgentEventContext",
    "ConversationContext",
    "RawEventRef",
    "SubjectContext",
]


class RawEventRef(HostContextModel):
    """Where the host stored the raw platform payload."""

    ref_id: str | None = None
    storage_key: str | None = None


class ConversationContext(HostContextModel):
    """Identifiers of the conversation the run belongs to."""

    conversation_id: str | None = None
    thread_id: str | None = None
    launcher_type: str | None = None
    launcher_id: str | None = None
    sender_id: str | None = None
    bot_id: str | None = None
    workspace_id: str | None = None
    session_id: str | None = None


class AgentEventContext(HostContextModel):
    """The triggering event (``event_type`` such as ``message.received``)."""

    event_id: str
    event_type: str
    event_time: int | None = None
    source: str
    source_event_type: str | None = None
    raw_ref: RawEventRef | None = None
    data: dict[str, Any] = Field(default_factory=dict)


class ActorContext(HostContextModel):
    """Who caused the event."""

    actor_type: str
    actor_id: str | None = None
    actor_name: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class SubjectContext(HostContextModel):
    """What the event is about."""

    subject_type: str
    subject_id: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)
