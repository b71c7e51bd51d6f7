"""Plugin events of the event-based (EBA) family; import them from
:mod:`langbot_plugin.api.entities.events`."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from langbot_plugin.api.entities._event_base import BaseEventModel
from langbot_plugin.api.entities._legacy import MessageChainFields, NewContentField
from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform._event_base import no_group, nobody
from langbot_plugin.api.entities.builtin.platform.message import MessageChain

__all__ = [
    "BotInvitedToGroup",
    "BotMuted",
    "BotRemovedFromGroup",
    "BotUnmuted",
    "FeedbackReceived",
    "GroupMemberBanned",
    "GroupMemberJoined",
    "GroupMemberLeft",
    "MessageDeleted",
    "MessageEdited",
    "MessageReactionReceived",
    "MessageReceived",
    "PlatformSpecificEventReceived",
]


# the same defaults as the platform events carry
_nobody = nobody
_no_group = no_group


_ChatType = platform_entities.ChatType
_User = platform_entities.User
_Group = platform_entities.UserGroup


class MessageReceived(BaseEventModel, MessageChainFields):
    """A message arrived (event-based family)."""

    event_name: str = "MessageReceived"
    bot_uuid: str = ""
    adapter_name: str = ""
    message_id: int | str = ""
    message_chain: MessageChain = Field(default_factory=MessageChain)
    sender: _User = Field(default_factory=_nobody)
    chat_type: _ChatType = _ChatType.PRIVATE
    chat_id: int | str = ""
    group: _Group | None = None
    platform_event: platform_events.MessageReceivedEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.MessageReceivedEvent) -> MessageReceived:
        return cls(
            **_copy(event, "bot_uuid adapter_name message_id message_chain sender"),
            **_copy(event, "chat_type chat_id group"),
            platform_event=event,
        )


def _copy(event: Any, names: str) -> dict[str, Any]:
    return {name: getattr(event, name) for name in names.split()}


class MessageEdited(BaseEventModel, NewContentField):
    """A message was edited."""

    event_name: str = "MessageEdited"
    message_id: int | str = ""
    new_content: MessageChain = Field(default_factory=MessageChain)
    editor: _User = Field(default_factory=_nobody)
    chat_type: _ChatType = _ChatType.PRIVATE
    chat_id: int | str = ""
    group: _Group | None = None
    platform_event: platform_events.MessageEditedEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.MessageEditedEvent) -> MessageEdited:
        names = "message_id new_content editor chat_type chat_id group"
        return cls(**_copy(event, names), platform_event=event)


class MessageDeleted(BaseEventModel):
    """A message was deleted or recalled."""

    event_name: str = "MessageDeleted"
    message_id: int | str = ""
    operator: _User | None = None
    chat_type: _ChatType = _ChatType.PRIVATE
    chat_id: int | str = ""
    group: _Group | None = None
    platform_event: platform_events.MessageDeletedEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.MessageDeletedEvent) -> MessageDeleted:
        names = "message_id operator chat_type chat_id group"
        return cls(**_copy(event, names), platform_event=event)


class MessageReactionReceived(BaseEventModel):
    """A reaction was added or removed."""

    event_name: str = "MessageReactionReceived"
    message_id: int | str = ""
    user: _User = Field(default_factory=_nobody)
    reaction: str = ""
    is_add: bool = True
    chat_type: _ChatType = _ChatType.PRIVATE
    chat_id: int | str = ""
    group: _Group | None = None
    platform_event: platform_events.MessageReactionEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(
        cls, event: platform_events.MessageReactionEvent
    ) -> MessageReactionReceived:
        names = "message_id user reaction is_add chat_type chat_id group"
        return cls(**_copy(event, names), platform_event=event)


class FeedbackReceived(BaseEventModel):
    """Feedback on a bot answer (1 like, 2 dislike)."""

    event_name: str = "FeedbackReceived"
    feedback_id: str
    feedback_type: int
    feedback_content: str | None = None
    inaccurate_reasons: list[str] | None = None
    user_id: str | None = None
    session_id: str | None = None
    message_id: str | None = None
    stream_id: str | None = None
    platform_event: platform_events.FeedbackReceivedEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.FeedbackReceivedEvent) -> FeedbackReceived:
        names = "feedback_id feedback_type feedback_content inaccurate_reasons user_id"
        return cls(
            **_copy(event, names),
            **_copy(event, "session_id message_id stream_id"),
            platform_event=event,
        )


class GroupMemberJoined(BaseEventModel):
    """Someone joined a group."""

    event_name: str = "GroupMemberJoined"
    group: _Group = Field(default_factory=_no_group)
    member: _User = Field(default_factory=_nobody)
    inviter: _User | None = None
    join_type: str | None = None
    platform_event: platform_events.MemberJoinedEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.MemberJoinedEvent) -> GroupMemberJoined:
        return cls(**_copy(event, "group member inviter join_type"), platform_event=event)


class GroupMemberLeft(BaseEventModel):
    """Someone left or was kicked from a group."""

    event_name: str = "GroupMemberLeft"
    group: _Group = Field(default_factory=_no_group)
    member: _User = Field(default_factory=_nobody)
    is_kicked: bool = False
    operator: _User | None = None
    platform_event: platform_events.MemberLeftEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.MemberLeftEvent) -> GroupMemberLeft:
        return cls(**_copy(event, "group member is_kicked operator"), platform_event=event)


class GroupMemberBanned(BaseEventModel):
    """A member was muted."""

    event_name: str = "GroupMemberBanned"
    group: _Group = Field(default_factory=_no_group)
    member: _User = Field(default_factory=_nobody)
    operator: _User | None = None
    duration: int | None = None
    platform_event: platform_events.MemberBannedEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.MemberBannedEvent) -> GroupMemberBanned:
        return cls(**_copy(event, "group member operator duration"), platform_event=event)


class BotInvitedToGroup(BaseEventModel):
    """The bot was invited into a group."""

    event_name: str = "BotInvitedToGroup"
    group: _Group = Field(default_factory=_no_group)
    inviter: _User | None = None
    request_id: int | str | None = None
    platform_event: platform_events.BotInvitedToGroupEvent | None = Field(
        default=None, exclude=True
    )

    @classmethod
    def from_platform_event(
        cls, event: platform_events.BotInvitedToGroupEvent
    ) -> BotInvitedToGroup:
        return cls(**_copy(event, "group inviter request_id"), platform_event=event)


class BotRemovedFromGroup(BaseEventModel):
    """The bot was removed from a group."""

    event_name: str = "BotRemovedFromGroup"
    group: _Group = Field(default_factory=_no_group)
    operator: _User | None = None
    platform_event: platform_events.BotRemovedFromGroupEvent | None = Field(
        default=None, exclude=True
    )

    @classmethod
    def from_platform_event(
        cls, event: platform_events.BotRemovedFromGroupEvent
    ) -> BotRemovedFromGroup:
        return cls(**_copy(event, "group operator"), platform_event=event)


class BotMuted(BaseEventModel):
    """The bot was muted in a group."""

    event_name: str = "BotMuted"
    group: _Group = Field(default_factory=_no_group)
    operator: _User | None = None
    duration: int | None = None
    platform_event: platform_events.BotMutedEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.BotMutedEvent) -> BotMuted:
        return cls(**_copy(event, "group operator duration"), platform_event=event)


class BotUnmuted(BaseEventModel):
    """The bot was unmuted in a group."""

    event_name: str = "BotUnmuted"
    group: _Group = Field(default_factory=_no_group)
    operator: _User | None = None
    platform_event: platform_events.BotUnmutedEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(cls, event: platform_events.BotUnmutedEvent) -> BotUnmuted:
        return cls(**_copy(event, "group operator"), platform_event=event)


class PlatformSpecificEventReceived(BaseEventModel):
    """An adapter-specific event; ``data`` is adapter-defined."""

    event_name: str = "PlatformSpecificEventReceived"
    adapter_name: str = ""
    action: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    platform_event: platform_events.PlatformSpecificEvent | None = Field(default=None, exclude=True)

    @classmethod
    def from_platform_event(
        cls, event: platform_events.PlatformSpecificEvent
    ) -> PlatformSpecificEventReceived:
        return cls(**_copy(event, "adapter_name action data"), platform_event=event)
