"""Run-scoped LangBot tools for external agent harnesses, over MCP (``docs/agent-runner.md``,
section 8): :class:`AgentRunExternalTools` (one run's tools, each through the run's
``AgentRunAPIProxy``), :class:`AgentRunMCPBridge` (them as a per-run MCP server),
:class:`AgentRunMCPAccess` (a bridge or the shared asset gateway, cleaned up),
:class:`AgentMCPServerConfig` and :func:`merge_mcp_server_config` (harness configs),
:func:`agent_tool` / :class:`AgentToolSpec` / :func:`collect_agent_tools` (more tools on
a subclass) and :mod:`~langbot_plugin.api.agent_tools.daemon` (runtimes on users'
machines). Serving uses the official ``mcp`` package, imported only when something serves.
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
