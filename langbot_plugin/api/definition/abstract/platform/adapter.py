"""Bases of the host's platform adapters and their message/event converters.

:class:`AbstractMessagePlatformAdapter` is the legacy contract (send, reply, listen,
run, stop); :class:`AbstractPlatformAdapter` adds the event-based (EBA) family: the
events and APIs an adapter declares, and optional platform APIs that raise
:class:`NotSupportedError` until an adapter implements them. Adapters are pydantic
models (``config``, ``logger``, ``bot_account_id`` plus their own fields).
"""

from __future__ import annotations

import abc
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from langbot_plugin.api.definition.abstract.platform.event_logger import AbstractEventLogger
from langbot_plugin.api.entities._legacy import attach_legacy_config
from langbot_plugin.api.entities.builtin.platform import entities as platform_entities
from langbot_plugin.api.entities.builtin.platform import events as platform_events
from langbot_plugin.api.entities.builtin.platform import message as platform_message
from langbot_plugin.api.entities.builtin.platform.errors import NotSupportedError

__all__ = [
    "AbstractEventConverter",
    "AbstractMessageConverter",
    "AbstractMessagePlatformAdapter",
    "AbstractPlatformAdapter",
    "EventListener",
    "NotSupportedError",
]

#: What ``register_listener`` takes: called (and awaited when it returns an awaitable)
#: with each event of the registered type and the adapter that received it.
EventListener = Callable[[platform_events.Event, "AbstractMessagePlatformAdapter"], Any]

_Id = int | str


class AbstractMessagePlatformAdapter(BaseModel, abc.ABC):
    """A connection to one messaging platform (the legacy contract)."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    #: The bot's own account id on the platform, set while the adapter starts.
    bot_account_id: str = Field(default="")
    config: dict[str, Any]
    logger: AbstractEventLogger = Field(exclude=True)

    def get_supported_apis(self) -> list[str]:
        """The platform APIs an agent may use through this adapter."""
        return [self.send_message.__name__, self.reply_message.__name__]

    @abc.abstractmethod
    async def send_message(
        self, target_type: str, target_id: str, message: platform_message.MessageChain
    ) -> Any:
        """Send ``message`` to a ``person`` or ``group`` (``target_type``)."""

    @abc.abstractmethod
    async def reply_message(
        self,
        message_source: platform_events.MessageEvent,
        message: platform_message.MessageChain,
        quote_origin: bool = False,
    ) -> Any:
        """Reply to ``message_source``, quoting it when ``quote_origin``."""

    async def reply_message_chunk(
        self,
        message_source: platform_events.MessageEvent,
        bot_message: dict[str, Any],
        message: platform_message.MessageChain,
        quote_origin: bool = False,
        is_final: bool = False,
    ) -> Any:
        """Send one piece of a streamed reply (``is_final`` for the last); adapters
        that stream implement it."""
        raise NotImplementedError

    async def create_message_card(
        self, message_id: _Id, event: platform_events.MessageEvent
    ) -> bool:
        """Open a card that a streamed reply will fill; False when there is none."""
        return False

    async def is_muted(self, group_id: int) -> bool:
        """Whether the bot is muted in the group."""
        return False

    @abc.abstractmethod
    def register_listener(
        self, event_type: type[platform_events.Event], callback: EventListener
    ) -> None:
        """Call ``callback`` for every event of ``event_type``."""

    @abc.abstractmethod
    def unregister_listener(
        self, event_type: type[platform_events.Event], callback: EventListener
    ) -> None:
        """Stop calling ``callback`` for ``event_type``."""

    @abc.abstractmethod
    async def run_async(self) -> None:
        """Connect and deliver events until stopped."""

    async def is_stream_output_supported(self) -> bool:
        """Whether replies can be streamed (see :meth:`reply_message_chunk`)."""
        return False

    @abc.abstractmethod
    async def kill(self) -> bool:
        """Stop the adapter. False tells a hot reload to keep the message source."""


class AbstractPlatformAdapter(AbstractMessagePlatformAdapter):
    """An event-based adapter: declares its events and APIs; every optional API
    raises :class:`NotSupportedError` (naming itself) unless the adapter has it."""

    def get_supported_events(self) -> list[str]:
        """The event types (``message.received``, ``group.member_joined``...) it emits."""
        return ["message.received"]

    # ------------------------------------------------------------------ messages

    async def edit_message(
        self,
        chat_type: str,
        chat_id: _Id,
        message_id: _Id,
        new_content: platform_message.MessageChain,
    ) -> None:
        raise NotSupportedError("edit_message")

    async def delete_message(self, chat_type: str, chat_id: _Id, message_id: _Id) -> None:
        raise NotSupportedError("delete_message")

    async def forward_message(
        self,
        from_chat_type: str,
        from_chat_id: _Id,
        message_id: _Id,
        to_chat_type: str,
        to_chat_id: _Id,
    ) -> platform_events.MessageResult:
        raise NotSupportedError("forward_message")

    async def get_message(
        self, chat_type: str, chat_id: _Id, message_id: _Id
    ) -> platform_events.MessageReceivedEvent:
        raise NotSupportedError("get_message")

    # ------------------------------------------------------------------ groups

    async def get_group_info(self, group_id: _Id) -> platform_entities.UserGroup:
        raise NotSupportedError("get_group_info")

    async def get_group_list(self) -> list[platform_entities.UserGroup]:
        raise NotSupportedError("get_group_list")

    async def get_group_member_list(self, group_id: _Id) -> list[platform_entities.UserGroupMember]:
        raise NotSupportedError("get_group_member_list")

    async def get_group_member_info(
        self, group_id: _Id, user_id: _Id
    ) -> platform_entities.UserGroupMember:
        raise NotSupportedError("get_group_member_info")

    async def set_group_name(self, group_id: _Id, name: str) -> None:
        raise NotSupportedError("set_group_name")

    async def mute_member(self, group_id: _Id, user_id: _Id, duration: int = 0) -> None:
        """Mute a member for ``duration`` seconds."""
        raise NotSupportedError("mute_member")

    async def unmute_member(self, group_id: _Id, user_id: _Id) -> None:
        raise NotSupportedError("unmute_member")

    async def kick_member(self, group_id: _Id, user_id: _Id) -> None:
        raise NotSupportedError("kick_member")

    async def leave_group(self, group_id: _Id) -> None:
        raise NotSupportedError("leave_group")

    # ------------------------------------------------------------------ users

    async def get_user_info(self, user_id: _Id) -> platform_entities.User:
        raise NotSupportedError("get_user_info")

    async def get_friend_list(self) -> list[platform_entities.User]:
        raise NotSupportedError("get_friend_list")

    async def approve_friend_request(
        self, request_id: _Id, approve: bool = True, remark: str | None = None
    ) -> None:
        raise NotSupportedError("approve_friend_request")

    async def approve_group_invite(self, request_id: _Id, approve: bool = True) -> None:
        raise NotSupportedError("approve_group_invite")

    # ------------------------------------------------------------------ media

    async def upload_file(self, file_data: bytes, filename: str) -> str:
        """Upload a file; its platform id or URL."""
        raise NotSupportedError("upload_file")

    async def get_file_url(self, file_id: str) -> str:
        raise NotSupportedError("get_file_url")

    # ------------------------------------------------------------------ pass-through

    async def call_platform_api(
        self, action: str, params: dict[str, Any] | None = None
    ) -> dict[str, Any]:
        """Call an adapter-specific API by name."""
        raise NotSupportedError(api_name=self.call_platform_api.__name__)


class AbstractMessageConverter:
    """Converts message chains between LangBot and one platform."""

    @staticmethod
    def yiri2target(message_chain: platform_message.MessageChain) -> Any:
        """A LangBot chain in the platform's form."""
        raise NotImplementedError

    @staticmethod
    def target2yiri(message_chain: Any) -> platform_message.MessageChain:
        """A platform message as a LangBot chain."""
        raise NotImplementedError


class AbstractEventConverter:
    """Converts events between LangBot and one platform."""

    @staticmethod
    def yiri2target(event: type[platform_events.Event]) -> Any:
        """A LangBot event in the platform's form."""
        raise NotImplementedError

    @staticmethod
    def target2yiri(event: Any) -> platform_events.Event:
        """A platform event as a LangBot event."""
        raise NotImplementedError


attach_legacy_config(AbstractMessagePlatformAdapter)
