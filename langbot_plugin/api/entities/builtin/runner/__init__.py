"""The runner entities under their 0.7 names (``RunnerContext``, ``RunnerResult``,
``RunnerManifest``...), for plugins written against the 0.7 SDK.

One implementation serves both lines: the classes are those of
:mod:`langbot_plugin.api.entities.builtin.agent_runner` (``RunnerContext`` *is*
``AgentRunContext``; ``RunnerManifest`` is the 0.7 descriptor, a subclass of
``AgentRunnerManifest``), and each 0.7 submodule (``context``, ``result``, ``box``,
``manifest``, ...) offers the names the 0.7 module did. Every 0.5 name is here too.
"""

from langbot_plugin.api.entities.builtin import agent_runner as _agent_runner
from langbot_plugin.api.entities.builtin.agent_runner import *  # noqa: F403
from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
from langbot_plugin.api.entities.builtin.runner.manifest import (
    RunnerCapabilities,
    RunnerManifest,
    RunnerPermissions,
)
from langbot_plugin.api.entities.builtin.runner.result import RunnerResult, RunnerResultType

__all__ = [
    "RunnerCapabilities",
    "RunnerContext",
    "RunnerManifest",
    "RunnerPermissions",
    "RunnerResult",
    "RunnerResultType",
]
__all__ += _agent_runner.__all__
