"""The object event handlers receive: an event context plus the query APIs."""

from __future__ import annotations

from langbot_plugin.api.entities.context import EventContext
from langbot_plugin.api.proxies.query_based_api import QueryBasedAPIProxy

__all__ = ["EventContextProxy"]


class EventContextProxy(QueryBasedAPIProxy, EventContext):
    """Build with ``EventContextProxy.model_validate({**event_context,
    "plugin_runtime_handler": channel})``; dump with ``model_dump()`` (the channel is
    left out)."""
