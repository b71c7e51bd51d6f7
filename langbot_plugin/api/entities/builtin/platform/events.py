"""Events emitted by platform adapters.

Two families live here: the legacy message events (:class:`FriendMessage`,
:class:`GroupMessage`) that the pipeline events embed as ``message_event``, and the
event-based ("EBA") events (:class:`EBAEvent` subclasses, ``type`` such as
``"message.received"``).
"""

from __future__ import annotations

from typing import Any

from pydantic import (
    BaseModel,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    model_serializer,
)

from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.entities.execution import SCOPE_FIELDS, WorkspaceExecutionScope

__all__ = [
    "BotInvitedToGroupEvent",
    "BotMutedEvent",
    "BotRemovedFromGroupEvent",
    "BotUnmutedEvent",
    "EBAEvent",
    "Event",
    "FeedbackEvent",
    "FeedbackReceivedEvent",
    "FriendAddedEvent",
    "FriendMessage",
    "FriendRemovedEvent",
    "FriendRequestReceivedEvent",
    "GroupInfoUpdatedEvent",
    "GroupMessage",
    "MemberBannedEvent",
    "MemberJoinedEvent",
    "MemberLeftEvent",
    "MessageDeletedEvent",
    "MessageEditedEvent",
    "MessageEvent",
    "MessageReactionEvent",
    "MessageReceivedEvent",
    "MessageResult",
    "PlatformSpecificEvent",
]


def _nobody() -> platform_entities.User:
    return platform_entities.User(id="")


def _no_group() -> platform_entities.UserGroup:
    return platform_entities.UserGroup(id="")


class Event(WorkspaceExecutionScope):
    """Base of every platform event; ``type`` names it."""

    type: str

    @classmethod
    def get_subtype(cls, name: str) -> type[Event]:
        """The event class whose default ``type`` is ``name`` (``Event`` if none)."""
        return _event_types().get(name, Event)

    @classmethod
    def parse_subtype(cls, obj: dict[str, Any]) -> Event:
        """Validate ``obj`` as the class its ``type`` names; fall back to a bare Event."""
        target = cls.get_subtype(str(obj.get("type", "")))
        try:
            return target.model_validate(obj)
        except ValueError:
            return Event(type=str(obj.get("type", "")))


def _event_types() -> dict[str, type[Event]]:
    found: dict[str, type[Event]] = {}
    pending: list[type[Event]] = [Event]
    while pending:
        cls = pending.pop()
        default = cls.model_fields["type"].default
        if isinstance(default, str):
            found.setdefault(default, cls)
        pending.extend(cls.__subclasses__())
    return found


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


class FeedbackEvent(Event):
    """A like (1) or dislike (2) on a bot answer (legacy family)."""

    type: str = "FeedbackEvent"
    feedback_id: str
    feedback_type: int
    feedback_content: str | None = None
    inaccurate_reasons: list[str] | None = None
    user_id: str | None = None
    session_id: str | None = None
    message_id: str | None = None
    stream_id: str | None = None
    source_platform_object: Any | None = None


class EBAEvent(Event):
    """Base of the unified event-based family."""

    type: str
    timestamp: float = 0.0
    bot_uuid: str = ""
    adapter_name: str = ""
    source_platform_object: Any | None = None


class MessageReceivedEvent(EBAEvent):
    """A new message."""

    type: str = "message.received"
    message_id: int | str = ""
    message_chain: MessageChain = Field(default_factory=MessageChain)
    sender: platform_entities.User = Field(default_factory=_nobody)
    chat_type: platform_entities.ChatType = platform_entities.ChatType.PRIVATE
    chat_id: int | str = ""
    group: platform_entities.UserGroup | None = None

    def to_legacy_event(self) -> FriendMessage | GroupMessage:
        """The same message as a legacy :class:`FriendMessage` or :class:`GroupMessage`."""
        if self.chat_type == platform_entities.ChatType.PRIVATE:
            friend = platform_entities.Friend(
                id=self.sender.id, nickname=self.sender.nickname, remark=self.sender.remark
            )
            return FriendMessage(
                sender=friend,
                message_chain=self.message_chain,
                time=self.timestamp,
                source_platform_object=self.source_platform_object,
            )
        group = platform_entities.Group(
            id=self.group.id if self.group else self.chat_id,
            name=self.group.name if self.group else "",
            permission=platform_entities.Permission.Member,
        )
        member = platform_entities.GroupMember(
            id=self.sender.id,
            member_name=self.sender.nickname,
            permission=platform_entities.Permission.Member,
            group=group,
        )
        return GroupMessage(
            sender=member,
            message_chain=self.message_chain,
            time=self.timestamp,
            source_platform_object=self.source_platform_object,
        )


class MessageEditedEvent(EBAEvent):
    """A message was edited."""

    type: str = "message.edited"
    message_id: int | str = ""
    new_content: MessageChain = Field(default_factory=MessageChain)
    editor: platform_entities.User = Field(default_factory=_nobody)
    chat_type: platform_entities.ChatType = platform_entities.ChatType.PRIVATE
    chat_id: int | str = ""
    group: platform_entities.UserGroup | None = None


class MessageDeletedEvent(EBAEvent):
    """A message was deleted or recalled."""

    type: str = "message.deleted"
    message_id: int | str = ""
    operator: platform_entities.User | None = None
    chat_type: platform_entities.ChatType = platform_entities.ChatType.PRIVATE
    chat_id: int | str = ""
    group: platform_entities.UserGroup | None = None


class MessageReactionEvent(EBAEvent):
    """A reaction was added (``is_add``) or removed."""

    type: str = "message.reaction"
    message_id: int | str = ""
    user: platform_entities.User = Field(default_factory=_nobody)
    reaction: str = ""
    is_add: bool = True
    chat_type: platform_entities.ChatType = platform_entities.ChatType.PRIVATE
    chat_id: int | str = ""
    group: platform_entities.UserGroup | None = None


class FeedbackReceivedEvent(EBAEvent):
    """Feedback on a bot answer: 1 like, 2 dislike, 3 withdrawn."""

    type: str = "feedback.received"
    feedback_id: str
    feedback_type: int
    feedback_content: str | None = None
    inaccurate_reasons: list[str] | None = None
    user_id: str | None = None
    session_id: str | None = None
    message_id: str | None = None
    stream_id: str | None = None

    def to_legacy_event(self) -> FeedbackEvent:
        """The same feedback as a legacy :class:`FeedbackEvent`."""
        fields = self.model_dump(
            include={
                "feedback_id",
                "feedback_type",
                "feedback_content",
                "inaccurate_reasons",
                "user_id",
                "session_id",
                "message_id",
                "stream_id",
            }
        )
        return FeedbackEvent(**fields, source_platform_object=self.source_platform_object)


class MemberJoinedEvent(EBAEvent):
    """Someone joined a group; ``join_type`` is invite, request, direct or None."""

    type: str = "group.member_joined"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    member: platform_entities.User = Field(default_factory=_nobody)
    inviter: platform_entities.User | None = None
    join_type: str | None = None


class MemberLeftEvent(EBAEvent):
    """Someone left (or was kicked from) a group."""

    type: str = "group.member_left"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    member: platform_entities.User = Field(default_factory=_nobody)
    is_kicked: bool = False
    operator: platform_entities.User | None = None


class MemberBannedEvent(EBAEvent):
    """A member was muted; ``duration`` in seconds, None for permanent."""

    type: str = "group.member_banned"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    member: platform_entities.User = Field(default_factory=_nobody)
    operator: platform_entities.User | None = None
    duration: int | None = None


class GroupInfoUpdatedEvent(EBAEvent):
    """Group settings changed."""

    type: str = "group.info_updated"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    operator: platform_entities.User | None = None
    changed_fields: list[str] = Field(default_factory=list)


class FriendRequestReceivedEvent(EBAEvent):
    """Someone asked to become a friend."""

    type: str = "friend.request_received"
    request_id: int | str = ""
    user: platform_entities.User = Field(default_factory=_nobody)
    message: str | None = None


class FriendAddedEvent(EBAEvent):
    """A friend was added."""

    type: str = "friend.added"
    user: platform_entities.User = Field(default_factory=_nobody)


class FriendRemovedEvent(EBAEvent):
    """A friend was removed."""

    type: str = "friend.removed"
    user: platform_entities.User = Field(default_factory=_nobody)


class BotInvitedToGroupEvent(EBAEvent):
    """The bot was invited into a group."""

    type: str = "bot.invited_to_group"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    inviter: platform_entities.User | None = None
    request_id: int | str | None = None


class BotRemovedFromGroupEvent(EBAEvent):
    """The bot was removed from a group."""

    type: str = "bot.removed_from_group"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    operator: platform_entities.User | None = None


class BotMutedEvent(EBAEvent):
    """The bot was muted in a group."""

    type: str = "bot.muted"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    operator: platform_entities.User | None = None
    duration: int | None = None


class BotUnmutedEvent(EBAEvent):
    """The bot was unmuted in a group."""

    type: str = "bot.unmuted"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    operator: platform_entities.User | None = None


class PlatformSpecificEvent(EBAEvent):
    """An adapter event with no standard type; ``data`` is adapter-defined."""

    type: str = "platform.specific"
    action: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


class MessageResult(BaseModel):
    """What sending a message returned."""

    message_id: int | str | None = None
    raw: dict[str, Any] | None = None
