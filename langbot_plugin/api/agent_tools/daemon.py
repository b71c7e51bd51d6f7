"""Runtimes on users' machines, connected to a runner plugin through a daemon hub.

A user runs a daemon (:class:`AgentRuntimeDaemonClient` subclassed by the runner's
daemon program) that connects out to the runner plugin's
:class:`AgentRuntimeDaemonHub`; the job's harness reaches the run's LangBot tools
through a :class:`LocalMCPProxy` on the daemon machine, relayed over the same
connection. The hub's defaults and who may act on a job: ``docs/agent-runner.md``,
"Runtimes on users' machines (the daemon hub)".
"""

from __future__ import annotations

import logging
import os
from typing import Any

from langbot_plugin.api.agent_tools._daemon_client import (
    AgentRuntimeDaemonClient,
    LocalMCPProxy,
    RelayedAnswer,
)
from langbot_plugin.api.agent_tools._daemon_hub import (
    DAEMON_MCP_SERVER_INFO,
    AgentRuntimeDaemonHub,
    DaemonConnection,
    DaemonRunSession,
)
from langbot_plugin.api.agent_tools._daemon_wire import AgentRuntimeDaemonError
from langbot_plugin.api.agent_tools.external_tools import AgentRunExternalTools
from langbot_plugin.api.agent_tools.mcp_config import AgentMCPServerConfig
from langbot_plugin.api.agent_tools.mcp_protocol import (
    AgentToolsMCPResolver,
    handle_mcp_payload,
    jsonrpc_error,
)

__all__ = [
    "DAEMON_MCP_SERVER_INFO",
    "DEFAULT_DAEMON_CONNECT_TIMEOUT",
    "DEFAULT_DAEMON_HUB_HOST",
    "DEFAULT_DAEMON_HUB_PORT",
    "AgentMCPServerConfig",
    "AgentRunExternalTools",
    "AgentRuntimeDaemonClient",
    "AgentRuntimeDaemonError",
    "AgentRuntimeDaemonHub",
    "DaemonConnection",
    "DaemonRunSession",
    "LocalMCPProxy",
    "RelayedAnswer",
    "agent_runtime_daemon_config_from_plugin_config",
    "get_agent_runtime_daemon_hub",
    "handle_agent_runtime_mcp_payload",
    "jsonrpc_error",
    "logger",
]

logger = logging.getLogger(__name__)

DEFAULT_DAEMON_HUB_HOST = "127.0.0.1"
DEFAULT_DAEMON_HUB_PORT = 8766
DEFAULT_DAEMON_CONNECT_TIMEOUT = 30.0
_TRUE = {"1", "true", "yes", "y", "on"}


def _flag(value: Any, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, str):
        return value.strip().lower() in _TRUE
    return bool(value)


def _port(value: Any, default: int) -> int:
    try:
        return int(value)
    except (TypeError, ValueError):
        return default


def agent_runtime_daemon_config_from_plugin_config(
    config: dict[str, Any] | None,
    *,
    env_prefix: str = "LANGBOT_AGENT_RUNTIME_DAEMON",
    default_host: str = DEFAULT_DAEMON_HUB_HOST,
    default_port: int = DEFAULT_DAEMON_HUB_PORT,
) -> dict[str, Any]:
    """``{"enabled", "host", "port", "token"}`` of a daemon hub: the plugin config's
    ``daemon-enabled``/``-host``/``-port``/``-token``, else ``<env_prefix>_ENABLED``
    (and ``_HOST``, ``_PORT``, ``_TOKEN``), else the defaults (disabled, loopback)."""
    data = dict(config or {})
    env = os.environ.get
    return {
        "enabled": _flag(data.get("daemon-enabled", env(f"{env_prefix}_ENABLED")), False),
        "host": str(data.get("daemon-host") or env(f"{env_prefix}_HOST") or default_host),
        "port": _port(data.get("daemon-port") or env(f"{env_prefix}_PORT"), default_port),
        "token": str(data.get("daemon-token") or env(f"{env_prefix}_TOKEN") or ""),
    }


async def handle_agent_runtime_mcp_payload(tools: AgentRunExternalTools, payload: Any) -> Any:
    """The hub's answer to one relayed MCP payload for a run's tools."""
    return await handle_mcp_payload(
        payload, AgentToolsMCPResolver(tools), server_info=DAEMON_MCP_SERVER_INFO
    )


_hubs: dict[str, AgentRuntimeDaemonHub] = {}


def get_agent_runtime_daemon_hub(
    key: str = "default", *, error_code_prefix: str = "agent_runtime"
) -> AgentRuntimeDaemonHub:
    """The process's hub for ``key`` (one per runner kind), created on first use."""
    hub = _hubs.get(key)
    if hub is None:
        hub = _hubs[key] = AgentRuntimeDaemonHub(error_code_prefix=error_code_prefix)
    return hub
