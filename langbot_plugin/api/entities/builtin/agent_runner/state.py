"""Scoped, host-persisted state visible to a runner.

Scopes: ``conversation`` (this conversation and runner), ``actor`` (the user, across
conversations), ``subject`` (the group/channel/object) and ``runner`` (the runner
everywhere; use sparingly). Use namespaced keys (``external.session_id``,
``memory.summary``). Runners request changes with ``AgentRunResult.state_updated``.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel

__all__ = ["STATE_SCOPE_LITERAL", "VALID_STATE_SCOPES", "AgentRunState"]

#: The state scopes, as a type.
STATE_SCOPE_LITERAL = Literal["conversation", "actor", "subject", "runner"]

#: The state scopes, as values.
VALID_STATE_SCOPES: tuple[str, ...] = ("conversation", "actor", "subject", "runner")


class AgentRunState(HostContextModel):
    """The state snapshot the host loaded before the run, one dict per scope."""

    conversation: dict[str, Any] = Field(default_factory=dict)
    actor: dict[str, Any] = Field(default_factory=dict)
    subject: dict[str, Any] = Field(default_factory=dict)
    runner: dict[str, Any] = Field(default_factory=dict)
