"""0.7 path for the runtime part of a run context (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``runtime`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.runtime import AgentRuntimeContext

__all__ = ["AgentRuntimeContext"]
