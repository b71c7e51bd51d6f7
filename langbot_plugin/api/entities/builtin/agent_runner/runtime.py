"""Host and timing information for a run."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel

__all__ = ["AgentRuntimeContext"]


class AgentRuntimeContext(HostContextModel):
    """``deadline_at`` (epoch seconds) bounds the whole run, host API calls included."""

    langbot_version: str | None = None
    trace_id: str | None = None
    deadline_at: float | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
