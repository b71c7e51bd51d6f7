"""0.7 path of the run-scoped API: ``RunnerAPIProxy`` is ``AgentRunAPIProxy``, and the
0.7 mixin names are the same mixins."""

from langbot_plugin.api.proxies.agent_run.api import (
    AgentRunAPIProxy,
    AgentRunBoxAPIMixin,
    AgentRunContextAPIMixin,
    AgentRunLedgerAPIMixin,
    AgentRunProxyBase,
    AgentRunReplyAPIMixin,
    AgentRunResourceAPIMixin,
    AgentRunStateAPIMixin,
)

RunnerAPIProxy = AgentRunAPIProxy
RunnerBoxAPIMixin = AgentRunBoxAPIMixin
RunnerContextAPIMixin = AgentRunContextAPIMixin
RunnerPlatformAPIMixin = AgentRunReplyAPIMixin
AgentRunReplyStreamAPIMixin = AgentRunReplyAPIMixin

__all__ = [
    "AgentRunLedgerAPIMixin",
    "AgentRunProxyBase",
    "AgentRunReplyStreamAPIMixin",
    "AgentRunResourceAPIMixin",
    "AgentRunStateAPIMixin",
    "RunnerAPIProxy",
    "RunnerBoxAPIMixin",
    "RunnerContextAPIMixin",
    "RunnerPlatformAPIMixin",
]
