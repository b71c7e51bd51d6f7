"""Runtimes registered with the host's run queue (admin APIs)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG

__all__ = ["AgentRuntime", "RuntimePage"]


class AgentRuntime(BaseModel):
    """A runtime that claims runs; ``status`` such as ``online``."""

    model_config = HOST_RESPONSE_MODEL_CONFIG

    runtime_id: str
    status: str
    display_name: str | None = None
    endpoint: str | None = None
    version: str | None = None
    capabilities: dict[str, Any] = Field(default_factory=dict)
    labels: dict[str, str] = Field(default_factory=dict)
    metadata: dict[str, Any] = Field(default_factory=dict)
    last_heartbeat_at: int | None = None
    heartbeat_deadline_at: int | None = None
    created_at: int | None = None
    updated_at: int | None = None


class RuntimePage(BaseModel):
    """A page of runtimes."""

    model_config = HOST_RESPONSE_MODEL_CONFIG

    items: list[AgentRuntime] = Field(default_factory=list)
    next_cursor: str | None = None
    prev_cursor: str | None = None
    has_more: bool = False
    total_count: int = 0
