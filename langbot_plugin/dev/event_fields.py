"""The fields of an event typed as ``/event NAME {json}``, with the usual ones filled in.

LangBot's message events carry the chat they came from (``launcher_type``,
``launcher_id``, ``sender_id``), the text, its message chain and the platform's
message object. :func:`event_fields` fills in each of those the event declares and the
JSON leaves out, for the session's person (or group) chat, so
``/event PersonNormalMessageReceived {"text_message": "ping"}`` is enough (``text`` is
accepted for ``text_message``). What the JSON gives always wins.
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.entities import events

__all__ = ["DEV_GROUP", "DEV_USER", "chat_message", "event_fields"]

DEV_USER = "dev-user"
DEV_GROUP = "dev-group"


def chat_message(
    text: str, *, group: bool, sender_id: str, sender_name: str, group_id: str, group_name: str
) -> dict[str, Any]:
    """The chat fields of a message event as LangBot fills them: where it came from (a
    person's chat, or with ``group`` a group's), the text, its chain and the platform's
    message."""
    chain = [{"type": "Plain", "text": text}]
    if group:
        sender = {
            "id": sender_id,
            "member_name": sender_name,
            "permission": "MEMBER",
            "group": {"id": group_id, "name": group_name, "permission": "MEMBER"},
        }
    else:
        sender = {"id": sender_id, "nickname": sender_name, "remark": None}
    return {
        "launcher_type": "group" if group else "person",
        "launcher_id": group_id if group else sender_id,
        "sender_id": sender_id,
        "text_message": text,
        "message_chain": chain,
        "message_event": {
            "type": "GroupMessage" if group else "FriendMessage",
            "sender": sender,
            "message_chain": chain,
        },
    }


def event_fields(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """``given`` plus the chat fields event ``name`` needs; ``ValueError`` if unknown."""
    try:
        declared = set(events.event_class(name).model_fields)
    except events.UnknownEventError as exc:
        raise ValueError(str(exc)) from None
    fields = dict(given)
    text = str(fields.pop("text", None) or fields.get("text_message") or "")
    defaults = chat_message(
        text,
        group=name.startswith("Group"),
        sender_id=DEV_USER,
        sender_name="Developer",
        group_id=DEV_GROUP,
        group_name="lbp dev",
    )
    for key, value in defaults.items():
        if key in declared and key not in fields:
            fields[key] = value
    return fields
