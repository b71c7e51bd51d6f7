"""Events emitted by platform adapters.

Two families live here: the legacy message events (:class:`FriendMessage`,
:class:`GroupMessage`) that the pipeline events embed as ``message_event``, and the
event-based ("EBA") events (:class:`EBAEvent` subclasses, ``type`` such as
``"message.received"``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.platform import _vendor_events
from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.builtin.platform._event_base import EBAEvent, Event
from langbot_plugin.api.entities.builtin.platform._event_base import no_group as _no_group
from langbot_plugin.api.entities.builtin.platform._event_base import nobody as _nobody
from langbot_plugin.api.entities.builtin.platform._event_lookup import (
    event_summary,
    parse_eba_event,
)
from langbot_plugin.api.entities.builtin.platform._legacy_events import (
    FeedbackEvent,
    FeedbackFields,
    FriendMessage,
    GroupMessage,
    MessageEvent,
)
from langbot_plugin.api.entities.builtin.platform._vendor_events import *  # noqa: F403
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

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
    "WorkspaceExecutionScope",
    "event_summary",
    "parse_eba_event",
]
__all__ += _vendor_events.__all__


class MessageReceivedEvent(EBAEvent):
    """A new message.

    ``legacy_event`` (in-process only) keeps the legacy event an adapter converted
    from, so :meth:`to_legacy_event` gives it back unchanged; ``sender_member`` and
    ``bot_role`` carry the group roles when the platform reports them.
    """

    summary_field: ClassVar[str] = "message_chain"
    type: str = "message.received"
    message_id: int | str = ""
    message_chain: MessageChain = Field(default_factory=MessageChain)
    sender: platform_entities.User = Field(default_factory=_nobody)
    chat_type: platform_entities.ChatType = platform_entities.ChatType.PRIVATE
    chat_id: int | str = ""
    group: platform_entities.UserGroup | None = None
    legacy_event: FriendMessage | GroupMessage | None = Field(default=None, exclude=True)
    sender_member: platform_entities.UserGroupMember | None = None
    bot_role: platform_entities.MemberRole | None = None

    def to_legacy_event(self) -> FriendMessage | GroupMessage:
        """The same message as a legacy :class:`FriendMessage` or :class:`GroupMessage`
        (the retained ``legacy_event`` with this event's chain and time, when set)."""
        if self.legacy_event is not None:
            return self.legacy_event.model_copy(
                update={
                    "message_chain": self.message_chain,
                    "time": self.timestamp,
                    "source_platform_object": self.source_platform_object,
                }
            )
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
            permission=_permission(self.bot_role),
        )
        member_info = self.sender_member
        member = platform_entities.GroupMember(
            id=self.sender.id,
            member_name=(member_info.display_name if member_info else None) or self.sender.nickname,
            permission=_permission(member_info.role if member_info else None),
            group=group,
            special_title=(member_info.title if member_info else None) or "",
        )
        return GroupMessage(
            sender=member,
            message_chain=self.message_chain,
            time=self.timestamp,
            source_platform_object=self.source_platform_object,
        )


_PERMISSIONS = {
    platform_entities.MemberRole.MEMBER: platform_entities.Permission.Member,
    platform_entities.MemberRole.ADMIN: platform_entities.Permission.Administrator,
    platform_entities.MemberRole.OWNER: platform_entities.Permission.Owner,
}


def _permission(role: platform_entities.MemberRole | None) -> platform_entities.Permission:
    """The legacy permission of a group role (a plain member when unknown)."""
    if role is None:
        return platform_entities.Permission.Member
    return _PERMISSIONS.get(role, platform_entities.Permission.Member)


# The ``*Fields`` models are fields a platform event shares with the plugin event that
# mirrors it (``langbot_plugin.api.entities.events``) or with another event; not events.


class MessageEditedFields(BaseModel):
    message_id: int | str = ""
    new_content: MessageChain = Field(default_factory=MessageChain)
    editor: platform_entities.User = Field(default_factory=_nobody)
    chat_type: platform_entities.ChatType = platform_entities.ChatType.PRIVATE
    chat_id: int | str = ""
    group: platform_entities.UserGroup | None = None


class MessageEditedEvent(MessageEditedFields, EBAEvent):
    """A message was edited."""

    summary_field: ClassVar[str] = "new_content"
    type: str = "message.edited"


class MessageDeletedFields(BaseModel):
    message_id: int | str = ""
    operator: platform_entities.User | None = None
    chat_type: platform_entities.ChatType = platform_entities.ChatType.PRIVATE
    chat_id: int | str = ""
    group: platform_entities.UserGroup | None = None


class MessageDeletedEvent(MessageDeletedFields, EBAEvent):
    """A message was deleted or recalled."""

    summary_field: ClassVar[str] = "message_id"
    type: str = "message.deleted"


class MessageReactionFields(BaseModel):
    message_id: int | str = ""
    user: platform_entities.User = Field(default_factory=_nobody)
    reaction: str = ""
    is_add: bool = True
    chat_type: platform_entities.ChatType = platform_entities.ChatType.PRIVATE
    chat_id: int | str = ""
    group: platform_entities.UserGroup | None = None


class MessageReactionEvent(MessageReactionFields, EBAEvent):
    """A reaction was added (``is_add``) or removed."""

    summary_field: ClassVar[str] = "reaction"
    type: str = "message.reaction"


class FeedbackReceivedEvent(FeedbackFields, EBAEvent):
    """Feedback on a bot answer: 1 like, 2 dislike, 3 withdrawn."""

    summary_field: ClassVar[str] = "feedback_content"
    type: str = "feedback.received"

    def to_legacy_event(self) -> FeedbackEvent:
        """The same feedback as a legacy :class:`FeedbackEvent`."""
        fields = self.model_dump(include=set(FeedbackFields.model_fields))
        return FeedbackEvent(**fields, source_platform_object=self.source_platform_object)


class MemberJoinedEvent(EBAEvent):
    """Someone joined a group; ``join_type`` is invite, request, direct or None."""

    summary_field: ClassVar[str] = "member"
    type: str = "group.member_joined"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    member: platform_entities.User = Field(default_factory=_nobody)
    inviter: platform_entities.User | None = None
    join_type: str | None = None


class MemberLeftEvent(EBAEvent):
    """Someone left (or was kicked from) a group."""

    summary_field: ClassVar[str] = "member"
    type: str = "group.member_left"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    member: platform_entities.User = Field(default_factory=_nobody)
    is_kicked: bool = False
    operator: platform_entities.User | None = None


class MemberBannedEvent(EBAEvent):
    """A member was muted; ``duration`` in seconds, None for permanent."""

    summary_field: ClassVar[str] = "member"
    type: str = "group.member_banned"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    member: platform_entities.User = Field(default_factory=_nobody)
    operator: platform_entities.User | None = None
    duration: int | None = None


class GroupOperatorFields(BaseModel):
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    operator: platform_entities.User | None = None


class BotMutedFields(GroupOperatorFields):
    duration: int | None = None


class GroupInfoUpdatedEvent(GroupOperatorFields, EBAEvent):
    """Group settings changed."""

    summary_field: ClassVar[str] = "changed_fields"
    type: str = "group.info_updated"
    changed_fields: list[str] = Field(default_factory=list)


class FriendRequestReceivedEvent(EBAEvent):
    """Someone asked to become a friend."""

    summary_field: ClassVar[str] = "message"
    type: str = "friend.request_received"
    request_id: int | str = ""
    user: platform_entities.User = Field(default_factory=_nobody)
    message: str | None = None


class FriendAddedEvent(EBAEvent):
    """A friend was added."""

    summary_field: ClassVar[str] = "user"
    type: str = "friend.added"
    user: platform_entities.User = Field(default_factory=_nobody)


class FriendRemovedEvent(EBAEvent):
    """A friend was removed."""

    summary_field: ClassVar[str] = "user"
    type: str = "friend.removed"
    user: platform_entities.User = Field(default_factory=_nobody)


class BotInvitedToGroupEvent(EBAEvent):
    """The bot was invited into a group."""

    summary_field: ClassVar[str] = "group"
    type: str = "bot.invited_to_group"
    group: platform_entities.UserGroup = Field(default_factory=_no_group)
    inviter: platform_entities.User | None = None
    request_id: int | str | None = None


class BotRemovedFromGroupEvent(GroupOperatorFields, EBAEvent):
    """The bot was removed from a group."""

    summary_field: ClassVar[str] = "group"
    type: str = "bot.removed_from_group"


class BotMutedEvent(BotMutedFields, EBAEvent):
    """The bot was muted in a group."""

    summary_field: ClassVar[str] = "group"
    type: str = "bot.muted"


class BotUnmutedEvent(GroupOperatorFields, EBAEvent):
    """The bot was unmuted in a group."""

    summary_field: ClassVar[str] = "group"
    type: str = "bot.unmuted"


class PlatformSpecificEvent(EBAEvent):
    """An adapter event with no standard type; ``data`` is adapter-defined."""

    summary_field: ClassVar[str] = "action"
    type: str = "platform.specific"
    action: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


class MessageResult(BaseModel):
    """What sending a message returned."""

    message_id: int | str | None = None
    raw: dict[str, Any] | None = None
