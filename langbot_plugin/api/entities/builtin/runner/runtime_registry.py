"""0.7 path for registered runtimes (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``runtime_registry`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.runtime_registry import (
    AgentRuntime,
    RuntimePage,
)

__all__ = ["HOST_RESPONSE_MODEL_CONFIG", "AgentRuntime", "RuntimePage"]
