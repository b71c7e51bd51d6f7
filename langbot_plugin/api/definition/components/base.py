"""The common base of every component kind."""

from __future__ import annotations

from abc import ABC
from typing import Any, ClassVar

from langbot_plugin.api.definition.plugin import BasePlugin
from langbot_plugin.api.proxies.invocation import current_binding, current_config

__all__ = ["BaseComponent", "BasePlugin", "NoneComponent", "current_binding", "current_config"]


class BaseComponent(ABC):
    """A unit a plugin offers (tool, command, listener, runner...).

    The worker instantiates it without arguments, sets ``plugin`` (for agent runners
    too, after binding their run API) and awaits ``initialize``.
    """

    __kind__: ClassVar[str] = ""
    plugin: BasePlugin

    def __init__(self) -> None:  # noqa: B027 - subclasses may call super().__init__()
        pass

    async def initialize(self) -> None:  # noqa: B027 - optional hook
        """Called once after construction; override to set things up."""

    def _handler(self) -> Any:
        plugin = self.__dict__.get("plugin")
        return getattr(plugin, "plugin_runtime_handler", None)

    def get_plugin_config(self) -> dict[str, Any]:
        """The owning plugin's settings (the current invocation's, in a shared runtime)."""
        scoped = current_config(self._handler())
        if scoped is not None:
            return dict(scoped)
        plugin = self.__dict__.get("plugin")
        return dict(plugin.get_config()) if plugin is not None else {}

    def get_installation_binding(self) -> Any:
        """The installation the current invocation serves, if one is bound."""
        return current_binding(self._handler())


class NoneComponent(BaseComponent):
    """Placeholder for a component that is not loaded."""
