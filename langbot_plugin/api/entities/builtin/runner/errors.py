"""0.7 path for errors of the run-scoped host APIs (one implementation with
:mod:`langbot_plugin.api.entities.builtin.agent_runner`, see its ``errors`` module)."""

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG
from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIError,
    AgentAPIException,
    PermissionDeniedError,
)

__all__ = [
    "HOST_RESPONSE_MODEL_CONFIG",
    "AgentAPIError",
    "AgentAPIException",
    "PermissionDeniedError",
]
