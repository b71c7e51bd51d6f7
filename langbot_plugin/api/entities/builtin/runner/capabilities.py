"""0.7 path for what a runner can do (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``capabilities`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.capabilities import AgentRunnerCapabilities
from langbot_plugin.api.entities.builtin.runner.manifest import RunnerCapabilities

__all__ = ["AgentRunnerCapabilities", "RunnerCapabilities"]
