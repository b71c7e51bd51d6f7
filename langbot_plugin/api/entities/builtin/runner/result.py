"""0.7 path for what a runner yields (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``result`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner import result as _same
from langbot_plugin.api.entities.builtin.agent_runner.result import *  # noqa: F403

RunnerResult = _same.AgentRunResult
RunnerResultType = _same.AgentRunResultType

__all__ = ["RunnerResult", "RunnerResultType"]
__all__ += _same.__all__
