"""0.7 path for what a runner declares about itself (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``manifest`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import manifest as _same
from langbot_plugin.api.entities.builtin.agent_runner.manifest import *  # noqa: F403

RunnerCapabilities = _same.AgentRunnerCapabilities
RunnerPermissions = _same.AgentRunnerPermissions

__all__ = ["RunnerCapabilities", "RunnerPermissions"]
__all__ += _same.__all__
