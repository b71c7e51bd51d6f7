"""0.7 path of the run API's shared machinery (see
:mod:`langbot_plugin.api.proxies.agent_run.common`)."""

from langbot_plugin.api.entities.builtin.runner.context import RunnerContext
from langbot_plugin.api.proxies.agent_run.common import (
    DEFAULT_RESOURCE_OPERATIONS,
    AgentAPIError,
    AgentAPIException,
    AgentRunProxyBase,
    LangBotAPIProxy,
    PermissionDeniedError,
)

__all__ = [
    "DEFAULT_RESOURCE_OPERATIONS",
    "AgentAPIError",
    "AgentAPIException",
    "AgentRunProxyBase",
    "LangBotAPIProxy",
    "PermissionDeniedError",
    "RunnerContext",
]
