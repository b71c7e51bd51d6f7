"""0.7 path for the host resources a runner may be granted (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``permissions`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.permissions import AgentRunnerPermissions
from langbot_plugin.api.entities.builtin.runner.manifest import RunnerPermissions

__all__ = ["AgentRunnerPermissions", "RunnerPermissions"]
