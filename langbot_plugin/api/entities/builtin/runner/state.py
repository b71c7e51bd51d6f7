"""0.7 path for scoped, host-persisted state (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``state`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.state import (
    STATE_SCOPE_LITERAL,
    VALID_STATE_SCOPES,
    AgentRunState,
)

__all__ = ["STATE_SCOPE_LITERAL", "VALID_STATE_SCOPES", "AgentRunState"]
