"""0.7 path of the admin run API (see :mod:`langbot_plugin.api.proxies.agent_run.admin`)."""

from langbot_plugin.api.entities.builtin.runner.result import RunnerResult
from langbot_plugin.api.proxies.agent_run.admin import (
    AgentAPIError,
    AgentAPIException,
    AgentRun,
    AgentRunAdminAPIProxy,
    AgentRunEvent,
    AgentRuntime,
    RunEventPage,
    RunnerStatsPage,
    RunPage,
    RunStats,
    RuntimePage,
    RuntimeStats,
)

RunnerAdminAPIProxy = AgentRunAdminAPIProxy

__all__ = [
    "AgentAPIError",
    "AgentAPIException",
    "AgentRun",
    "AgentRunEvent",
    "AgentRuntime",
    "RunEventPage",
    "RunPage",
    "RunStats",
    "RunnerAdminAPIProxy",
    "RunnerResult",
    "RunnerStatsPage",
    "RuntimePage",
    "RuntimeStats",
]
