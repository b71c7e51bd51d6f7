"""The run-scoped API object a runner gets from ``self.get_run_api(ctx)`` (0.5) or as
``ctx.api`` (0.7, there named ``RunnerAPIProxy``: the same class)."""

from __future__ import annotations

from langbot_plugin.api.proxies.agent_run.artifacts import AgentRunArtifactsAPIMixin
from langbot_plugin.api.proxies.agent_run.box import AgentRunBoxAPIMixin
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase
from langbot_plugin.api.proxies.agent_run.context import AgentRunContextAPIMixin
from langbot_plugin.api.proxies.agent_run.files import AgentRunFilesAPIMixin
from langbot_plugin.api.proxies.agent_run.ledger import AgentRunLedgerAPIMixin
from langbot_plugin.api.proxies.agent_run.namespaces import RunAPINamespaces
from langbot_plugin.api.proxies.agent_run.replies import AgentRunReplyAPIMixin
from langbot_plugin.api.proxies.agent_run.resources import AgentRunResourceAPIMixin
from langbot_plugin.api.proxies.agent_run.state import AgentRunStateAPIMixin

__all__ = [
    "AgentRunAPIProxy",
    "AgentRunArtifactsAPIMixin",
    "AgentRunBoxAPIMixin",
    "AgentRunContextAPIMixin",
    "AgentRunLedgerAPIMixin",
    "AgentRunProxyBase",
    "AgentRunReplyAPIMixin",
    "AgentRunResourceAPIMixin",
    "AgentRunStateAPIMixin",
]


class AgentRunAPIProxy(
    AgentRunBoxAPIMixin,
    AgentRunReplyAPIMixin,
    AgentRunResourceAPIMixin,
    AgentRunContextAPIMixin,
    AgentRunFilesAPIMixin,
    AgentRunLedgerAPIMixin,
    AgentRunStateAPIMixin,
    AgentRunArtifactsAPIMixin,
    RunAPINamespaces,
):
    """Host APIs for one run, limited to what the run was granted:
    ``AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel)`` (any
    :class:`~langbot_plugin.api.proxies.channel.Channel`). The flat methods are the 0.5/0.7
    API; ``api.models``, ``api.tools``, ... are the same calls in Protocol v1's namespaces
    (:mod:`.namespaces`); the checks, deadline and error codes are :mod:`.common`'s."""
