"""Plugin events of the event-based (EBA) family; import them from
:mod:`langbot_plugin.api.entities.events`."""

from __future__ import annotations

from typing import Any, Self

from pydantic import Field

from langbot_plugin.api.entities._event_base import BaseEventModel
from langbot_plugin.api.entities._legacy import MessageChainFields, NewContentField
from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform._event_base import no_group, nobody
from langbot_plugin.api.entities.builtin.platform._legacy_events import FeedbackFields
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


class _MirrorsPlatformEvent(BaseEventModel):
    """A plugin event whose own fields are those of its platform event (kept aside in
    ``platform_event``, never dumped)."""

    event_name: str

    @classmethod
    def from_platform_event(cls, event: platform_events.EBAEvent) -> Self:
        """The plugin event of ``event``: each field of this class copied from it."""
        skip = {*BaseEventModel.model_fields, "event_name", "platform_event"}
        fields: dict[str, Any] = {
            name: getattr(event, name) for name in cls.model_fields if name not in skip
        }
        fields["platform_event"] = event
        return cls(**fields)


class MessageReceived(_MirrorsPlatformEvent, MessageChainFields):
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


class MessageEdited(platform_events.MessageEditedFields, _MirrorsPlatformEvent, NewContentField):
    """A message was edited."""

    event_name: str = "MessageEdited"
    platform_event: platform_events.MessageEditedEvent | None = Field(default=None, exclude=True)


class MessageDeleted(platform_events.MessageDeletedFields, _MirrorsPlatformEvent):
    """A message was deleted or recalled."""

    event_name: str = "MessageDeleted"
    platform_event: platform_events.MessageDeletedEvent | None = Field(default=None, exclude=True)


class MessageReactionReceived(platform_events.MessageReactionFields, _MirrorsPlatformEvent):
    """A reaction was added or removed."""

    event_name: str = "MessageReactionReceived"
    platform_event: platform_events.MessageReactionEvent | None = Field(default=None, exclude=True)


class FeedbackReceived(FeedbackFields, _MirrorsPlatformEvent):
    """Feedback on a bot answer (1 like, 2 dislike)."""

    event_name: str = "FeedbackReceived"
    platform_event: platform_events.FeedbackReceivedEvent | None = Field(default=None, exclude=True)


class GroupMemberJoined(_MirrorsPlatformEvent):
    """Someone joined a group."""

    event_name: str = "GroupMemberJoined"
    group: _Group = Field(default_factory=_no_group)
    member: _User = Field(default_factory=_nobody)
    inviter: _User | None = None
    join_type: str | None = None
    platform_event: platform_events.MemberJoinedEvent | None = Field(default=None, exclude=True)


class GroupMemberLeft(_MirrorsPlatformEvent):
    """Someone left or was kicked from a group."""

    event_name: str = "GroupMemberLeft"
    group: _Group = Field(default_factory=_no_group)
    member: _User = Field(default_factory=_nobody)
    is_kicked: bool = False
    operator: _User | None = None
    platform_event: platform_events.MemberLeftEvent | None = Field(default=None, exclude=True)


class GroupMemberBanned(_MirrorsPlatformEvent):
    """A member was muted."""

    event_name: str = "GroupMemberBanned"
    group: _Group = Field(default_factory=_no_group)
    member: _User = Field(default_factory=_nobody)
    operator: _User | None = None
    duration: int | None = None
    platform_event: platform_events.MemberBannedEvent | None = Field(default=None, exclude=True)


class BotInvitedToGroup(_MirrorsPlatformEvent):
    """The bot was invited into a group."""

    event_name: str = "BotInvitedToGroup"
    group: _Group = Field(default_factory=_no_group)
    inviter: _User | None = None
    request_id: int | str | None = None
    platform_event: platform_events.BotInvitedToGroupEvent | None = Field(
        default=None, exclude=True
    )


class BotRemovedFromGroup(platform_events.GroupOperatorFields, _MirrorsPlatformEvent):
    """The bot was removed from a group."""

    event_name: str = "BotRemovedFromGroup"
    platform_event: platform_events.BotRemovedFromGroupEvent | None = Field(
        default=None, exclude=True
    )


class BotMuted(platform_events.BotMutedFields, _MirrorsPlatformEvent):
    """The bot was muted in a group."""

    event_name: str = "BotMuted"
    platform_event: platform_events.BotMutedEvent | None = Field(default=None, exclude=True)


class BotUnmuted(platform_events.GroupOperatorFields, _MirrorsPlatformEvent):
    """The bot was unmuted in a group."""

    event_name: str = "BotUnmuted"
    platform_event: platform_events.BotUnmutedEvent | None = Field(default=None, exclude=True)


class PlatformSpecificEventReceived(_MirrorsPlatformEvent):
    """An adapter-specific event; ``data`` is adapter-defined."""

    event_name: str = "PlatformSpecificEventReceived"
    adapter_name: str = ""
    action: str = ""
    data: dict[str, Any] = Field(default_factory=dict)
    platform_event: platform_events.PlatformSpecificEvent | None = Field(default=None, exclude=True)


#: The classes above, in the order they are defined (``events.EVENT_TYPES`` lists them).
EBA_EVENTS: tuple[type[_MirrorsPlatformEvent], ...] = tuple(_MirrorsPlatformEvent.__subclasses__())
