"""Reading event-based platform events from dicts, and one-line summaries of them;
import :func:`parse_eba_event` and :func:`event_summary` from :mod:`.events`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from pydantic import BaseModel

from langbot_plugin.api.entities.builtin.platform._event_base import EBAEvent, event_types
from langbot_plugin.api.entities.builtin.platform.message import MessageChain

__all__ = ["event_summary", "parse_eba_event"]

#: Keys of an event dict that never become part of a parsed event: the host-side
#: original legacy event and the adapter's raw object.
_HOST_ONLY_KEYS = frozenset({"legacy_event", "source_platform_object"})


def parse_eba_event(data: Mapping[str, Any]) -> EBAEvent:
    """The event class its ``type`` names, validated from ``data`` (which is not
    changed). :class:`ValueError` without a string ``type`` or for an unknown one."""
    if not isinstance(data, Mapping):  # pyright: ignore[reportUnnecessaryIsInstance]
        raise ValueError("an event-based platform event must be a mapping with a type")
    kind = data.get("type")
    if not isinstance(kind, str):
        raise ValueError("an event-based platform event needs a string type")
    event_class = event_types(EBAEvent).get(kind)
    if event_class is None or event_class is EBAEvent:
        raise ValueError(f"unknown event-based platform event type: {kind!r}")
    return event_class.model_validate({k: v for k, v in data.items() if k not in _HOST_ONLY_KEYS})


def event_summary(event: EBAEvent | Mapping[str, Any]) -> str:
    """One line standing for the event: the value of its class's ``summary_field``
    rendered as text (a message chain as its text, a user as its name), or the event
    type when that is empty."""
    if isinstance(event, EBAEvent):
        kind = event.type
        value = getattr(event, event.summary_field, None)
    else:
        kind = str(event.get("type") or "event")
        event_class = event_types(EBAEvent).get(kind, EBAEvent)
        value = event.get(event_class.summary_field)
    return _render(value).strip() or kind


def _render(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, MessageChain):
        return str(value)
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json")
    if isinstance(value, dict):
        return _render_dict(cast(dict[str, Any], value))
    if isinstance(value, list | tuple):
        items = cast(list[Any] | tuple[Any, ...], value)
        separator = "" if any(isinstance(item, dict) for item in items) else ", "
        return separator.join(_render(item) for item in items)
    return str(value)


def _render_dict(value: dict[str, Any]) -> str:
    if "root" in value:  # a dumped root model
        return _render(value["root"])
    kind = value.get("type")
    if kind == "Source":
        return ""
    if kind in {"Plain", "text"}:
        return str(value.get("text") or "")
    if kind is not None:
        return f"[{kind}]"
    return str(value.get("nickname") or value.get("name") or value.get("id") or "")
