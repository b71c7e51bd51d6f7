"""Events the host emits to plugins' ``EventListener`` components.

Every event class has an ``event_name`` defaulting to its class name; that string
selects the class when an :class:`~langbot_plugin.api.entities.context.EventContext`
is read from the wire (see :func:`event_class`). Message-chain fields keep their
component classes at any depth. ``pipeline_query`` is the module of
:class:`~langbot_plugin.api.entities.builtin.pipeline.query.Query`, reachable from here as
the host imports it.
"""

from __future__ import annotations

from langbot_plugin.api.entities import _eba_events
from langbot_plugin.api.entities._eba_events import *  # noqa: F403
from langbot_plugin.api.entities._event_base import BaseEventModel
from langbot_plugin.api.entities._legacy import MessageChainFields, ReplyMessageChainField
from langbot_plugin.api.entities.builtin.pipeline import query as pipeline_query
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform.message import MessageChain
from langbot_plugin.api.entities.builtin.provider import message as provider_message
from langbot_plugin.api.entities.builtin.provider.session import Session
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope
from langbot_plugin.rpc.errors import InvalidParamsError

__all__ = [
    "EVENT_TYPES",
    "BaseEventModel",
    "GroupCommandSent",
    "GroupMessageReceived",
    "GroupNormalMessageReceived",
    "NormalMessageResponded",
    "PersonCommandSent",
    "PersonMessageReceived",
    "PersonNormalMessageReceived",
    "PromptPreProcessing",
    "UnknownEventError",
    "WorkspaceExecutionScope",
    "event_class",
    "pipeline_query",
]
__all__ += _eba_events.__all__


# ---------------------------------------------------------------------- pipeline events


class PersonMessageReceived(BaseEventModel, MessageChainFields):
    """Any private message arrived."""

    event_name: str = "PersonMessageReceived"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    message_event: platform_events.FriendMessage
    message_chain: MessageChain


class GroupMessageReceived(BaseEventModel, MessageChainFields):
    """Any group message arrived."""

    event_name: str = "GroupMessageReceived"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    message_event: platform_events.GroupMessage
    message_chain: MessageChain


class _WithReplyMessageChain(BaseEventModel, ReplyMessageChainField):
    """Events whose handler may set the reply (used when it prevents the default)."""

    reply_message_chain: MessageChain | None = None


_UserMessageAlter = (
    provider_message.ContentElement | list[provider_message.ContentElement] | str | None
)


class PersonNormalMessageReceived(_WithReplyMessageChain, MessageChainFields):
    """A private message the pipeline will answer; ``user_message_alter`` rewrites it."""

    event_name: str = "PersonNormalMessageReceived"
    launcher_type: str
    launcher_id: int | str
    sender_id: int | str
    text_message: str
    message_event: platform_events.FriendMessage
    message_chain: MessageChain
    user_message_alter: _UserMessageAlter = None


class GroupNormalMessageReceived(_WithReplyMessageChain, MessageChainFields):
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
        *_eba_events.EBA_EVENTS,
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


class UnknownEventError(InvalidParamsError, ValueError):
    """An ``event_name`` that names no event class of this SDK."""

    code = "unknown_event"


def event_class(event_name: str) -> type[BaseEventModel]:
    """The class for ``event_name``; :class:`UnknownEventError` if there is none."""
    cls = EVENT_TYPES.get(event_name)
    if cls is None:
        raise UnknownEventError(
            f"unknown event_name {event_name!r}; known events: {', '.join(sorted(EVENT_TYPES))}"
        )
    return cls
