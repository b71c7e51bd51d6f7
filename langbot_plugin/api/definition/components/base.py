"""The common base of every component kind."""

from __future__ import annotations

from abc import ABC
from typing import TYPE_CHECKING, Any, ClassVar

if TYPE_CHECKING:
    from langbot_plugin.api.definition.plugin import BasePlugin

__all__ = ["BaseComponent", "NoneComponent"]


class BaseComponent(ABC):
    """A unit a plugin offers (tool, command, listener, runner...).

    The worker instantiates it without arguments, sets ``plugin`` (except for agent
    runners, which get a run-scoped API instead) and awaits ``initialize``.
    """

    __kind__: ClassVar[str] = ""
    plugin: BasePlugin

    def __init__(self) -> None:  # noqa: B027 - subclasses may call super().__init__()
        pass

    async def initialize(self) -> None:  # noqa: B027 - optional hook
        """Called once after construction; override to set things up."""

    def get_plugin_config(self) -> dict[str, Any]:
        """The owning plugin's settings."""
        plugin = self.__dict__.get("plugin")
        return dict(plugin.get_config()) if plugin is not None else {}


class NoneComponent(BaseComponent):
    """Placeholder for a component that is not loaded."""
