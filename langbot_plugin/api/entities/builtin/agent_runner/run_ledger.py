"""The host's record of runs and their result events."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG

__all__ = ["AgentRun", "AgentRunEvent", "AgentRunStatus", "RunEventPage", "RunPage"]


class AgentRunStatus(str, enum.Enum):  # noqa: UP042 -- str() as in the reference
    """Lifecycle of a run."""

    CREATED = "created"
    QUEUED = "queued"
    CLAIMED = "claimed"
    RUNNING = "running"
    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"
    TIMEOUT = "timeout"


class _HostAnswer(BaseModel):
    model_config = HOST_RESPONSE_MODEL_CONFIG


class AgentRun(_HostAnswer):
    """One run; ``cancel_requested_at`` is set once someone asked to cancel it."""

    run_id: str
    status: AgentRunStatus | str
    id: int | None = None
    event_id: str | None = None
    agent_id: str | None = None
    binding_id: str | None = None
    runner_id: str | None = None
    conversation_id: str | None = None
    thread_id: str | None = None
    workspace_id: str | None = None
    bot_id: str | None = None
    status_reason: str | None = None
    queue_name: str | None = None
    requested_runtime_id: str | None = None
    claimed_by_runtime_id: str | None = None
    claim_token: str | None = None
    created_at: int | None = None
    started_at: int | None = None
    finished_at: int | None = None
    updated_at: int | None = None
    deadline_at: int | None = None
    cancel_requested_at: int | None = None
    priority: int | None = None
    claim_lease_expires_at: int | None = None
    dispatch_attempts: int | None = None
    last_claimed_at: int | None = None
    usage: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class AgentRunEvent(_HostAnswer):
    """One result event recorded for a run."""

    run_id: str
    sequence: int
    type: str
    id: int | None = None
    created_at: int | None = None
    data: dict[str, Any] = Field(default_factory=dict)
    usage: dict[str, Any] | None = None
    source: str | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)


class RunPage(_HostAnswer):
    """A page of runs."""

    items: list[AgentRun] = Field(default_factory=list)
    next_cursor: str | None = None
    prev_cursor: str | None = None
    has_more: bool = False
    total_count: int = 0


class RunEventPage(_HostAnswer):
    """A page of a run's events."""

    items: list[AgentRunEvent] = Field(default_factory=list)
    next_cursor: str | None = None
    prev_cursor: str | None = None
    has_more: bool = False
    total_count: int | None = None
