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

__all__ = ["DEV_GROUP", "DEV_USER", "event_fields"]

DEV_USER = "dev-user"
DEV_GROUP = "dev-group"


def event_fields(name: str, given: dict[str, Any]) -> dict[str, Any]:
    """``given`` plus the chat fields event ``name`` needs; ``ValueError`` if unknown."""
    try:
        declared = set(events.event_class(name).model_fields)
    except events.UnknownEventError as exc:
        raise ValueError(str(exc)) from None
    fields = dict(given)
    text = str(fields.pop("text", None) or fields.get("text_message") or "")
    group = name.startswith("Group")
    chain = [{"type": "Plain", "text": text}]
    if group:
        sender = {
            "id": DEV_USER,
            "member_name": "Developer",
            "permission": "MEMBER",
            "group": {"id": DEV_GROUP, "name": "lbp dev", "permission": "MEMBER"},
        }
        message_event = {"type": "GroupMessage", "sender": sender, "message_chain": chain}
    else:
        sender = {"id": DEV_USER, "nickname": "Developer", "remark": None}
        message_event = {"type": "FriendMessage", "sender": sender, "message_chain": chain}
    defaults: dict[str, Any] = {
        "launcher_type": "group" if group else "person",
        "launcher_id": DEV_GROUP if group else DEV_USER,
        "sender_id": DEV_USER,
        "text_message": text,
        "message_chain": chain,
        "message_event": message_event,
    }
    for key, value in defaults.items():
        if key in declared and key not in fields:
            fields[key] = value
    return fields
