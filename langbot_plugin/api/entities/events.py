"""Events the host emits to plugins' ``EventListener`` components.

Every event class has an ``event_name`` defaulting to its class name; that string
selects the class when an :class:`~langbot_plugin.api.entities.context.EventContext`
is read from the wire (see :func:`event_class`). Message-chain fields keep their
component classes at any depth.
"""

from __future__ import annotations

from typing import Any

from pydantic import ConfigDict, Field, model_validator

from langbot_plugin.api.entities.builtin.pipeline.query import Query
from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.entities.builtin.provider import message as provider_message
from langbot_plugin.api.entities.builtin.provider.session import Session
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

__all__ = [
    "EVENT_TYPES",
    "BaseEventModel",
    "BotInvitedToGroup",
    "BotMuted",
    "BotRemovedFromGroup",
    "BotUnmuted",
    "FeedbackReceived",
    "GroupCommandSent",
    "GroupMemberBanned",
    "GroupMemberJoined",
    "GroupMemberLeft",
    "GroupMessageReceived",
    "GroupNormalMessageReceived",
    "MessageDeleted",
    "MessageEdited",
    "MessageReactionReceived",
    "MessageReceived",
    "NormalMessageResponded",
    "PersonCommandSent",
    "PersonMessageReceived",
    "PersonNormalMessageReceived",
    "PlatformSpecificEventReceived",
    "PromptPreProcessing",
    "UnknownEventError",
    "event_class",
]


class BaseEventModel(WorkspaceExecutionScope):
    """Base of all plugin events; ``query`` exists only inside the host process."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    query_uuid: str | None = None
    query: Query | None = Field(default=None, exclude=True)

    @model_validator(mode="after")
    def _scope_from_query(self) -> BaseEventModel:
        if self.query is not None:
            self.inherit_execution_scope(self.query)
            if self.query_uuid is None:
                self.query_uuid = self.query.query_uuid
            elif self.query.query_uuid is not None and self.query_uuid != self.query.query_uuid:
                raise ValueError("Event query_uuid does not match Query query_uuid")
        return self


def _nobody() -> platform_entities.User:
    return platform_entities.User(id="")


def _no_group() -> platform_entities.UserGroup:
    return platform_entities.UserGroup(id="")


_ChatType = platform_entities.ChatType
_User = platform_entities.User
_Group = platform_entities.UserGroup

# ---------------------------------------------------------------------- EBA events


class MessageReceived(BaseEventModel):
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


class MessageEdited(BaseEventModel):
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


# ---------------------------------------------------------------------- pipeline events


class PersonMessageReceived(BaseEventModel):
    """Any private message arrived."""

    event_name: str = "PersonMessageReceived"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    message_event: platform_events.FriendMessage
    message_chain: MessageChain


class GroupMessageReceived(BaseEventModel):
    """Any group message arrived."""

    event_name: str = "GroupMessageReceived"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    message_event: platform_events.GroupMessage
    message_chain: MessageChain


class _WithReplyMessageChain(BaseEventModel):
    """Events whose handler may set the reply (used when it prevents the default)."""

    reply_message_chain: MessageChain | None = None


_UserMessageAlter = (
    provider_message.ContentElement | list[provider_message.ContentElement] | str | None
)


class PersonNormalMessageReceived(_WithReplyMessageChain):
    """A private message the pipeline will answer; ``user_message_alter`` rewrites it."""

    event_name: str = "PersonNormalMessageReceived"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    text_message: str
    message_event: platform_events.FriendMessage
    message_chain: MessageChain
    user_message_alter: _UserMessageAlter = None


class GroupNormalMessageReceived(_WithReplyMessageChain):
    """A group message the pipeline will answer; ``user_message_alter`` rewrites it."""

    event_name: str = "GroupNormalMessageReceived"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    text_message: str
    message_event: platform_events.GroupMessage
    message_chain: MessageChain
    user_message_alter: _UserMessageAlter = None


class PersonCommandSent(_WithReplyMessageChain):
    """A command arrived in a private chat."""

    event_name: str = "PersonCommandSent"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    command: str
    params: list[str]
    text_message: str
    is_admin: bool


class GroupCommandSent(_WithReplyMessageChain):
    """A command arrived in a group."""

    event_name: str = "GroupCommandSent"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    command: str
    params: list[str]
    text_message: str
    is_admin: bool


class NormalMessageResponded(_WithReplyMessageChain):
    """The pipeline answered a message."""

    event_name: str = "NormalMessageResponded"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    session: Session
    prefix: str
    response_text: str
    finish_reason: str
    funcs_called: list[str]


_PromptItem = provider_message.Message | provider_message.MessageChunk


class PromptPreProcessing(BaseEventModel):
    """A conversation's prompt is being assembled; both lists may be edited."""

    event_name: str = "PromptPreProcessing"
    session_name: str
    default_prompt: list[_PromptItem]
    prompt: list[_PromptItem]


#: ``event_name`` -> event class.
EVENT_TYPES: dict[str, type[BaseEventModel]] = {
    cls.model_fields["event_name"].default: cls
    for cls in (
        MessageReceived,
        MessageEdited,
        MessageDeleted,
        MessageReactionReceived,
        FeedbackReceived,
        GroupMemberJoined,
        GroupMemberLeft,
        GroupMemberBanned,
        BotInvitedToGroup,
        BotRemovedFromGroup,
        BotMuted,
        BotUnmuted,
        PlatformSpecificEventReceived,
        PersonMessageReceived,
        GroupMessageReceived,
        PersonNormalMessageReceived,
        GroupNormalMessageReceived,
        PersonCommandSent,
        GroupCommandSent,
        NormalMessageResponded,
        PromptPreProcessing,
    )
}


class UnknownEventError(ValueError):
    """An ``event_name`` that names no event class of this SDK."""


def event_class(event_name: str) -> type[BaseEventModel]:
    """The class for ``event_name``; :class:`UnknownEventError` if there is none."""
    cls = EVENT_TYPES.get(event_name)
    if cls is None:
        raise UnknownEventError(
            f"unknown event_name {event_name!r}; known events: {', '.join(sorted(EVENT_TYPES))}"
        )
    return cls
