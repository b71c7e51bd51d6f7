"""Pages returned by the history and event APIs."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.transcript import TranscriptItem

__all__ = ["AgentEventRecord", "EventPage", "HistoryPage", "HistorySearchResult"]


class _HostAnswer(BaseModel):
    model_config = HOST_RESPONSE_MODEL_CONFIG


class HistoryPage(_HostAnswer):
    """A page of transcript items; follow ``next_cursor`` while ``has_more``."""

    items: list[TranscriptItem] = Field(default_factory=list)
    next_cursor: str | None = None
    prev_cursor: str | None = None
    has_more: bool = False
    total_count: int | None = None


class HistorySearchResult(_HostAnswer):
    """Transcript items matching ``query``."""

    items: list[TranscriptItem] = Field(default_factory=list)
    total_count: int | None = None
    query: str


class AgentEventRecord(_HostAnswer):
    """A recorded event envelope (large payloads stay behind ``raw_ref``)."""

    event_id: str
    event_type: str
    event_time: int | None = None
    source: str
    bot_id: str | None = None
    workspace_id: str | None = None
    conversation_id: str | None = None
    thread_id: str | None = None
    actor_type: str | None = None
    actor_id: str | None = None
    actor_name: str | None = None
    subject_type: str | None = None
    subject_id: str | None = None
    input_summary: str | None = None
    input_ref: str | None = None
    raw_ref: str | None = None
    seq: int | None = None
    cursor: str | None = None
    created_at: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class EventPage(_HostAnswer):
    """A page of event records."""

    items: list[AgentEventRecord] = Field(default_factory=list)
    next_cursor: str | None = None
    prev_cursor: str | None = None
    has_more: bool = False
    total_count: int | None = None
