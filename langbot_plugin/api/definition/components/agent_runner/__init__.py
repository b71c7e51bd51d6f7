from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner

__all__ = ["AgentRunner"]
