"""0.7 path for run records (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``run_ledger`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    AgentRunEvent,
    AgentRunStatus,
    RunEventPage,
    RunPage,
)

__all__ = [
    "HOST_RESPONSE_MODEL_CONFIG",
    "AgentRun",
    "AgentRunEvent",
    "AgentRunStatus",
    "RunEventPage",
    "RunPage",
]
