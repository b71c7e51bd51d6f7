"""The payloads a host sends for commands, tool calls and events, built as LangBot
4.11.2 builds them (``pkg/command/cmdmgr.py`` for commands)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langbot_plugin.api.entities import events
from langbot_plugin.api.entities.builtin.command.context import typed_command
from langbot_plugin.api.entities.context import EventContext
from langbot_plugin.api.entities.events import BaseEventModel
from langbot_plugin.dev.event_fields import chat_message

__all__ = ["command_context", "event_context", "message_received", "session"]


def session(launcher_type: str = "person", launcher_id: str = "local-user") -> dict[str, Any]:
    """The chat session a command or a tool call comes from."""
    return {"launcher_type": launcher_type, "launcher_id": launcher_id, "sender_id": launcher_id}


def command_context(
    text: str,
    *,
    chat: Mapping[str, Any] | None = None,
    privilege: int = 1,
    query_id: int = 1,
    prefix: str = "!",
) -> dict[str, Any]:
    """What the host sends for a user typing ``<prefix><text>``: ``params`` are the
    words, ``command`` the first, ``crt_params`` the words after it."""
    command_text = text.strip().removeprefix(prefix)
    return typed_command(
        command_text,
        session=chat or session(),
        privilege=privilege,
        query_id=query_id,
        query_uuid=f"query-{query_id}",
        prefix=prefix,
    )


def event_context(event: BaseEventModel | EventContext | Mapping[str, Any]) -> dict[str, Any]:
    """An event (an instance of a class of ``langbot_plugin.api.entities.events``), a
    context, or a context dict, as the ``event_context`` the host emits."""
    if isinstance(event, BaseEventModel):
        event = EventContext.from_event(event)
    if isinstance(event, EventContext):
        return event.model_dump(mode="json")
    return EventContext.model_validate(dict(event)).model_dump(mode="json")


def message_received(
    text: str,
    *,
    group: bool = False,
    sender_id: str = "local-user",
    sender_name: str = "User",
    group_id: str = "local-group",
) -> events.PersonNormalMessageReceived | events.GroupNormalMessageReceived:
    """The event LangBot emits when a chat message is about to be answered: a private
    message (``PersonNormalMessageReceived``), or with ``group=True`` a group one."""
    fields = chat_message(
        text,
        group=group,
        sender_id=sender_id,
        sender_name=sender_name,
        group_id=group_id,
        group_name="Group",
    )
    model = events.GroupNormalMessageReceived if group else events.PersonNormalMessageReceived
    return model.model_validate(fields)
