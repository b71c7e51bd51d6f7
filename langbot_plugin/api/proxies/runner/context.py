"""0.7 path of the run's context pulls (prompt, history, events, steering)."""

from langbot_plugin.api.proxies.agent_run.context import (
    AgentAPIError,
    AgentAPIException,
    AgentEventRecord,
    AgentRunContextAPIMixin,
    EventPage,
    HistoryPage,
    HistorySearchResult,
    SteeringPullResult,
)

RunnerContextAPIMixin = AgentRunContextAPIMixin

__all__ = [
    "AgentAPIError",
    "AgentAPIException",
    "AgentEventRecord",
    "EventPage",
    "HistoryPage",
    "HistorySearchResult",
    "RunnerContextAPIMixin",
    "SteeringPullResult",
]
