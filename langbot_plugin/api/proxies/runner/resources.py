"""0.7 path of the run's models, tools, knowledge bases and storage."""

from langbot_plugin.api.proxies.agent_run.resources import AgentRunResourceAPIMixin

__all__ = ["AgentRunResourceAPIMixin"]
