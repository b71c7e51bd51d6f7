"""The run-scoped API object a runner gets from ``self.get_run_api(ctx)``."""

from __future__ import annotations

from langbot_plugin.api.proxies.agent_run.context import AgentRunContextAPIMixin
from langbot_plugin.api.proxies.agent_run.files import AgentRunFilesAPIMixin
from langbot_plugin.api.proxies.agent_run.ledger import AgentRunLedgerAPIMixin
from langbot_plugin.api.proxies.agent_run.resources import AgentRunResourceAPIMixin
from langbot_plugin.api.proxies.agent_run.state import AgentRunStateAPIMixin

__all__ = ["AgentRunAPIProxy"]


class AgentRunAPIProxy(
    AgentRunResourceAPIMixin,
    AgentRunContextAPIMixin,
    AgentRunFilesAPIMixin,
    AgentRunLedgerAPIMixin,
    AgentRunStateAPIMixin,
):
    """Host APIs for one run, limited to what the run was granted.

    ``AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=channel, permissions=...)``:
    ``permissions`` are the runner manifest's declared permissions; they fill in
    resources the host granted without listing operations. See
    :mod:`langbot_plugin.api.proxies.agent_run.common` for the checks, deadline and
    error codes.
    """
