"""The object command handlers receive: an execute context plus the query APIs."""

from __future__ import annotations

from langbot_plugin.api.entities.builtin.command.context import ExecuteContext
from langbot_plugin.api.proxies.query_based_api import QueryBasedAPIProxy

__all__ = ["ExecuteContextProxy"]


class ExecuteContextProxy(QueryBasedAPIProxy, ExecuteContext):
    """Build with ``ExecuteContextProxy.model_validate({**command_context,
    "plugin_runtime_handler": channel})``."""
