"""Alias module: :class:`AgentRunnerCapabilities` lives in :mod:`.manifest`."""

from langbot_plugin.api.entities.builtin.agent_runner.manifest import AgentRunnerCapabilities

__all__ = ["AgentRunnerCapabilities"]
