"""The 0.7 names of the agent-runner entities, for plugins written against 0.7.

Only the package is provided (not the 0.7 submodules): ``RunnerContext``,
``RunnerResult``, ``RunnerResultType``, ``RunnerCapabilities``, ``RunnerPermissions``
alias the 0.5 classes; ``RunnerManifest`` is the 0.7 descriptor (with ``usages``).
Every unchanged name is re-exported from :mod:`..agent_runner`.
"""

from langbot_plugin.api.entities.builtin import agent_runner as _agent_runner
from langbot_plugin.api.entities.builtin.agent_runner import *  # noqa: F403
from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.manifest import (
    AgentRunnerCapabilities,
    AgentRunnerPermissions,
    RunnerManifest,
)
from langbot_plugin.api.entities.builtin.agent_runner.result import (
    AgentRunResult,
    AgentRunResultType,
)

RunnerContext = AgentRunContext
RunnerResult = AgentRunResult
RunnerResultType = AgentRunResultType
RunnerCapabilities = AgentRunnerCapabilities
RunnerPermissions = AgentRunnerPermissions

__all__ = [
    "RunnerCapabilities",
    "RunnerContext",
    "RunnerManifest",
    "RunnerPermissions",
    "RunnerResult",
    "RunnerResultType",
]
__all__ += _agent_runner.__all__
