"""The legacy platform message events (the pipeline events embed them as
``message_event``); import them from :mod:`.events`."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, SerializationInfo, SerializerFunctionWrapHandler, model_serializer

from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.builtin.platform._event_base import Event
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.entities.execution import SCOPE_FIELDS

__all__ = ["FeedbackEvent", "FriendMessage", "GroupMessage", "MessageEvent"]


class FeedbackFields(BaseModel):
    """The fields of feedback on a bot answer, in every family that carries it."""

    feedback_id: str
    feedback_type: int
    feedback_content: str | None = None
    inaccurate_reasons: list[str] | None = None
    user_id: str | None = None
    session_id: str | None = None
    message_id: str | None = None
    stream_id: str | None = None


class MessageEvent(Event):
    """A received message (legacy family)."""

    type: str
    message_chain: MessageChain
    time: float | None = None
    #: The adapter's raw event object, for replying later; in-process only.
    source_platform_object: Any | None = None


class _LegacyMessageEvent(MessageEvent):
    """Wire form shared by friend and group messages: scope (when set), type, sender,
    chain, time; the raw platform object never leaves the process."""

    @model_serializer(mode="wrap")
    def _wire_form(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        dumped: dict[str, Any] = handler(self)
        dumped.pop("source_platform_object", None)
        for name in SCOPE_FIELDS:
            if dumped.get(name) is None:
                dumped.pop(name, None)
        return dumped


class FriendMessage(_LegacyMessageEvent):
    """A private message."""

    type: str = "FriendMessage"
    sender: platform_entities.Friend
    message_chain: MessageChain


class GroupMessage(_LegacyMessageEvent):
    """A group message."""

    type: str = "GroupMessage"
    sender: platform_entities.GroupMember
    message_chain: MessageChain

    @property
    def group(self) -> platform_entities.Group:
        return self.sender.group


class FeedbackEvent(FeedbackFields, Event):
    """A like (1) or dislike (2) on a bot answer (legacy family)."""

    type: str = "FeedbackEvent"
    source_platform_object: Any | None = None
