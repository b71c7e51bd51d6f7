"""The plugin class: one per plugin, the first thing the worker instantiates."""

from __future__ import annotations

from abc import ABC
from typing import Any

from langbot_plugin.api.proxies.langbot_api import LangBotAPIProxy

__all__ = ["BasePlugin", "NonePlugin"]


class BasePlugin(ABC, LangBotAPIProxy):
    """Subclass it in ``main.py``; every :class:`LangBotAPIProxy` method is available.

    The worker constructs it without arguments, then sets ``config`` (the settings the
    user entered in LangBot) and connects it to the host before ``initialize`` runs.
    """

    config: dict[str, Any]

    def __init__(self) -> None:
        self.config = {}

    def get_config(self) -> dict[str, Any]:
        """The plugin's settings, as configured in LangBot."""
        return self.config

    async def initialize(self) -> None:
        """Called once after the plugin is connected; override to set things up."""


class NonePlugin(BasePlugin):
    """Placeholder before a plugin is loaded."""
