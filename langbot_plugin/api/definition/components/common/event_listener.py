"""Event listeners: react to pipeline and platform events."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from langbot_plugin.api.definition.components.base import BaseComponent
from langbot_plugin.api.entities._lazy import lazy_names

if TYPE_CHECKING:
    from langbot_plugin.api.entities.context import EventContext
    from langbot_plugin.api.entities.events import BaseEventModel

__all__ = ["BaseEventModel", "EventContext", "EventListener"]

__getattr__ = lazy_names(
    __name__,
    {
        "langbot_plugin.api.entities.events": "BaseEventModel",
        "langbot_plugin.api.entities.context": "EventContext",
    },
)

EventHandler = Callable[[Any], Awaitable[None]]


class EventListener(BaseComponent):
    """Register handlers with :meth:`handler` in ``__init__``.

    A handler registered for an event class also receives its subclasses' events.
    Handlers may change the event context (``prevent_default``, ``prevent_postorder``,
    ``reply_message_chain``...); the changed context goes back to LangBot.
    """

    __kind__ = "EventListener"

    def __init__(self) -> None:
        super().__init__()
        self.registered_handlers = {}

    @property
    def registered_handlers(self) -> dict[type[BaseEventModel], list[EventHandler]]:
        """The handlers by event class."""
        return vars(self).setdefault("_registered_handlers", {})

    @registered_handlers.setter
    def registered_handlers(self, value: dict[type[BaseEventModel], list[EventHandler]]) -> None:
        vars(self)["_registered_handlers"] = value

    def handler(self, event_type: type[BaseEventModel]) -> Callable[[EventHandler], EventHandler]:
        """Decorator: call ``func(event_context)`` for events of ``event_type``."""

        def register(func: EventHandler) -> EventHandler:
            self.registered_handlers.setdefault(event_type, []).append(func)
            return func

        return register

    def handlers_for(self, event_type: type[Any]) -> list[EventHandler]:
        """Handlers that apply to an event of ``event_type``, most specific class first."""
        found: list[EventHandler] = []
        for cls in event_type.__mro__:
            found.extend(self.registered_handlers.get(cls, []))
        return found
