"""0.7 path of the run ledger calls."""

from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    AgentRunEvent,
    RunEventPage,
    RunPage,
)
from langbot_plugin.api.entities.builtin.runner.result import RunnerResult
from langbot_plugin.api.proxies.agent_run.ledger import AgentRunLedgerAPIMixin

__all__ = [
    "AgentRun",
    "AgentRunEvent",
    "AgentRunLedgerAPIMixin",
    "RunEventPage",
    "RunPage",
    "RunnerResult",
]
