"""0.7 path of the run's Box calls (see :mod:`langbot_plugin.api.proxies.agent_run.box`)."""

from langbot_plugin.api.entities.builtin.agent_runner.box import (
    BoxBinding,
    BoxFile,
    BoxSession,
    BoxStatus,
)
from langbot_plugin.api.proxies.agent_run.box import AgentRunBoxAPIMixin

RunnerBoxAPIMixin = AgentRunBoxAPIMixin

__all__ = ["BoxBinding", "BoxFile", "BoxSession", "BoxStatus", "RunnerBoxAPIMixin"]
