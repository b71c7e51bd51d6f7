"""Run-scoped LangBot tools for external agent harnesses, over MCP.

* :class:`AgentRunExternalTools` -- the tools of one run (assets, current event,
  history, knowledge retrieval, LangBot tool detail and call), each going through the
  run's :class:`~langbot_plugin.api.proxies.agent_run.AgentRunAPIProxy`;
* :class:`AgentRunMCPBridge` -- those tools as a per-run MCP server on loopback
  (streamable HTTP with a run token, or stdio through ``mcp_stdio``);
* :class:`AgentRunMCPAccess` -- picks a bridge or the shared asset gateway
  (:mod:`~langbot_plugin.api.agent_tools.asset_gateway`) and cleans up;
* :class:`AgentMCPServerConfig` -- the neutral server description harness configs are
  built from; :func:`merge_mcp_server_config` adds it to an ``mcpServers`` config;
* :func:`agent_tool`, :class:`AgentToolSpec`, :func:`collect_agent_tools` -- declare
  more tools on a subclass;
* :mod:`~langbot_plugin.api.agent_tools.daemon` -- a WebSocket hub for runtimes on
  users' machines, and the client those machines run.

Serving uses the official ``mcp`` package; it is imported only when something serves.
"""

from langbot_plugin.api.agent_tools.decorators import (
    AgentToolSpec,
    agent_tool,
    collect_agent_tools,
)
from langbot_plugin.api.agent_tools.external_tools import AgentRunExternalTools
from langbot_plugin.api.agent_tools.mcp_access import AgentRunMCPAccess
from langbot_plugin.api.agent_tools.mcp_bridge import (
    LANGBOT_AGENT_MCP_SERVER_NAME,
    AgentRunMCPBridge,
    merge_mcp_server_config,
)
from langbot_plugin.api.agent_tools.mcp_config import AgentMCPServerConfig

__all__ = [
    "LANGBOT_AGENT_MCP_SERVER_NAME",
    "AgentMCPServerConfig",
    "AgentRunExternalTools",
    "AgentRunMCPAccess",
    "AgentRunMCPBridge",
    "AgentToolSpec",
    "agent_tool",
    "collect_agent_tools",
    "merge_mcp_server_config",
]
