"""Alias module: :class:`AgentRunnerPermissions` lives in :mod:`.manifest`."""

from langbot_plugin.api.entities.builtin.agent_runner.manifest import AgentRunnerPermissions

__all__ = ["AgentRunnerPermissions"]
