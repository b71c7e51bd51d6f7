"""The roots of the platform event classes; import them from :mod:`.events`."""

from __future__ import annotations

from typing import Any, ClassVar, TypeVar

from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

__all__ = ["EBAEvent", "Event", "event_types", "no_group", "nobody"]


def nobody() -> platform_entities.User:
    """The default user of an event field the adapter did not fill."""
    return platform_entities.User(id="")


def no_group() -> platform_entities.UserGroup:
    """The default group of an event field the adapter did not fill."""
    return platform_entities.UserGroup(id="")


class Event(WorkspaceExecutionScope):
    """Base of every platform event; ``type`` names it."""

    type: str

    @classmethod
    def get_subtype(cls, name: str) -> type[Event]:
        """The event class whose default ``type`` is ``name`` (``Event`` if none)."""
        return event_types(Event).get(name, Event)

    @classmethod
    def parse_subtype(cls, obj: dict[str, Any]) -> Event:
        """Validate ``obj`` as the class its ``type`` names; fall back to a bare Event."""
        target = cls.get_subtype(str(obj.get("type", "")))
        try:
            return target.model_validate(obj)
        except ValueError:
            return Event(type=str(obj.get("type", "")))


_E = TypeVar("_E", bound=Event)


def event_types(root: type[_E]) -> dict[str, type[_E]]:
    """Default ``type`` -> class, for ``root`` and all its subclasses at any depth (the
    first class found keeps a ``type`` that two classes share)."""
    found: dict[str, type[_E]] = {}
    pending: list[type[_E]] = [root]
    while pending:
        cls = pending.pop()
        default = cls.model_fields["type"].default
        if isinstance(default, str):
            found.setdefault(default, cls)
        pending.extend(cls.__subclasses__())
    return found


class EBAEvent(Event):
    """Base of the unified event-based family.

    ``summary_field`` names the field whose value stands for the event in one line
    (see :func:`~.events.event_summary`); it is a class attribute, never serialized.
    """

    summary_field: ClassVar[str] = "type"

    type: str
    timestamp: float = 0.0
    bot_uuid: str = ""
    adapter_name: str = ""
    source_platform_object: Any | None = None
