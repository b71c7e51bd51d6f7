"""Event-based platform events that only one platform emits (WeCom AI bot, WeCom
customer service, DingTalk); import them from :mod:`.events`.

Each is a direct subclass of :class:`EBAEvent`, as in the reference, so code that
enumerates ``EBAEvent.__subclasses__()`` sees every public event; the fields the WeCom
events share come from the mixins :class:`_ChatFields` and :class:`_WecomCSFields`
(models that are not events themselves)."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.builtin.platform._event_base import EBAEvent

__all__ = [
    "DingTalkCardActionEvent",
    "WecomBotEnterChatEvent",
    "WecomBotTemplateCardEvent",
    "WecomCSEnterSessionEvent",
    "WecomCSMessageSendFailedEvent",
    "WecomCSRejectCustomerMessageChangedEvent",
    "WecomCSServicerStatusChangedEvent",
    "WecomCSSessionStatusChangedEvent",
]

_ChatType = platform_entities.ChatType


class _ChatFields(BaseModel):
    """Fields shared by the chat-bound vendor events; ``data`` is the raw callback."""

    user: platform_entities.User | None = None
    chat_id: str = ""
    chat_type: _ChatType = _ChatType.PRIVATE
    data: dict[str, Any] = Field(default_factory=dict)


# ---------------------------------------------------------------------- WeCom AI bot


class WecomBotEnterChatEvent(_ChatFields, EBAEvent):
    """A user opened a conversation with the AI bot (not a friend request)."""

    summary_field: ClassVar[str] = "chat_id"
    type: str = "wecombot.enter_chat"
    message_id: str = ""


class WecomBotTemplateCardEvent(_ChatFields, EBAEvent):
    """A user clicked or submitted a template card the host does not manage itself."""

    summary_field: ClassVar[str] = "event_key"
    type: str = "wecombot.template_card_event"
    message_id: str = ""
    task_id: str = ""
    event_key: str = ""
    card_type: str = ""
    selected_items: list[dict[str, Any]] = Field(default_factory=list)


# ---------------------------------------------------------------------- DingTalk


class DingTalkCardActionEvent(EBAEvent):
    """An interaction with a DingTalk card outside the host's managed input forms."""

    summary_field: ClassVar[str] = "action"
    type: str = "dingtalk.card_action"
    user: platform_entities.User | None = None
    space_id: str = ""
    card_instance_id: str = ""
    action: str = ""
    data: dict[str, Any] = Field(default_factory=dict)


# ---------------------------------------------------------------------- WeCom customer service


class _WecomCSFields(_ChatFields):
    """A WeCom customer-service callback: the service account and the customer."""

    open_kfid: str = ""
    external_userid: str = ""


class WecomCSEnterSessionEvent(_WecomCSFields, EBAEvent):
    """A customer opened a customer-service conversation."""

    summary_field: ClassVar[str] = "external_userid"
    type: str = "wecomcs.enter_session"
    scene: str = ""
    scene_param: str = ""
    welcome_code: str = ""
    wechat_channels: dict[str, Any] = Field(default_factory=dict)


class WecomCSMessageSendFailedEvent(_WecomCSFields, EBAEvent):
    """WeCom could not deliver an outgoing customer-service message."""

    summary_field: ClassVar[str] = "fail_msgid"
    type: str = "wecomcs.msg_send_fail"
    fail_msgid: str = ""
    fail_type: int = 0


class WecomCSServicerStatusChangedEvent(_WecomCSFields, EBAEvent):
    """A customer-service representative became available or unavailable."""

    summary_field: ClassVar[str] = "servicer_userid"
    type: str = "wecomcs.servicer_status_change"
    servicer_userid: str = ""
    status: int = 0
    stop_type: int = 0


class WecomCSSessionStatusChangedEvent(_WecomCSFields, EBAEvent):
    """A conversation was assigned, transferred or closed."""

    summary_field: ClassVar[str] = "external_userid"
    type: str = "wecomcs.session_status_change"
    change_type: int = 0
    old_servicer_userid: str = ""
    new_servicer_userid: str = ""
    msg_code: str = ""


class WecomCSRejectCustomerMessageChangedEvent(_WecomCSFields, EBAEvent):
    """A representative turned the rejection of customer messages on or off."""

    summary_field: ClassVar[str] = "external_userid"
    type: str = "wecomcs.reject_customer_msg_switch_change"
    servicer_userid: str = ""
    reject_switch: int = 0
