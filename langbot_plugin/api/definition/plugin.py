"""The plugin class: one per plugin, the first thing the worker instantiates."""

from __future__ import annotations

from abc import ABC
from typing import Any

from langbot_plugin.api.proxies.invocation import current_binding, current_config
from langbot_plugin.api.proxies.langbot_api import LangBotAPIProxy

__all__ = ["BasePlugin", "NonePlugin", "current_binding", "current_config"]


class BasePlugin(ABC, LangBotAPIProxy):
    """Subclass it in ``main.py``; every :class:`LangBotAPIProxy` method is available.

    The worker constructs it without arguments, then sets ``config`` (the settings the
    user entered in LangBot) and connects it to the host before ``initialize`` runs.
    Inside an invocation bound to one installation (a shared runtime), ``config`` and
    :meth:`get_installation_binding` are that installation's.
    """

    _plugin_config: dict[str, Any]

    def __init__(self) -> None:
        self._plugin_config = {}

    @property
    def config(self) -> dict[str, Any]:
        """The plugin's settings: the current invocation's, else the plugin's own."""
        scoped = current_config(self.plugin_runtime_handler)
        if scoped is not None:
            return dict(scoped)
        own: dict[str, Any] | None = self.__dict__.get("_plugin_config")
        if own is None:  # a subclass that did not call super().__init__()
            own = self._plugin_config = {}
        return own

    @config.setter
    def config(self, value: dict[str, Any] | None) -> None:
        self._plugin_config = dict(value or {})

    def get_config(self) -> dict[str, Any]:
        """The plugin's settings, as configured in LangBot."""
        return self.config

    def get_installation_binding(self) -> Any:
        """The installation the current invocation serves (``None`` outside one, and
        in a dedicated worker, which serves one installation only)."""
        return current_binding(self.plugin_runtime_handler)

    async def initialize(self) -> None:
        """Called once after the plugin is connected; override to set things up."""

    async def on_installation_revoked(self, binding: Any) -> None:
        """Called by a shared runtime when one installation this object serves goes away
        (uninstall, disable, upgrade): drop whatever was kept for ``binding``. No
        invocation is bound, so no host API is available; a dedicated worker is
        stopped instead and never calls it."""


class NonePlugin(BasePlugin):
    """Placeholder before a plugin is loaded."""
