"""0.7 path of the run's persistent state calls."""

from langbot_plugin.api.proxies.agent_run.state import AgentRunStateAPIMixin

__all__ = ["AgentRunStateAPIMixin"]
