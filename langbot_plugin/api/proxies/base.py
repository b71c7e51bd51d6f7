"""A base for API proxies bound to a connection and a plugin container."""

from __future__ import annotations

from abc import ABC
from typing import Any

from langbot_plugin.api.proxies.channel import Channel

__all__ = ["APIProxy"]


class APIProxy(ABC):  # noqa: B024 -- an abstract base without abstract methods, as in the reference
    """Holds the connection and the plugin container a proxy works for."""

    def __init__(self, plugin_runtime_handler: Channel, plugin_container: Any) -> None:
        self.plugin_runtime_handler = plugin_runtime_handler
        self.plugin_container = plugin_container
