"""0.7 path for what started a run (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``trigger`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.trigger import AgentTrigger, TriggerSource

__all__ = ["AgentTrigger", "TriggerSource"]
