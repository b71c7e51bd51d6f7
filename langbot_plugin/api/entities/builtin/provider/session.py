"""Sessions and conversations as the host keeps them.

Times travel as float epoch seconds; on input an epoch number, a ``datetime`` or an
ISO-8601 string is accepted. The launcher type travels as its value (``"person"``,
``"group"``). The validators and serializers carry the reference's names
(``validate_create_time``, ``serialize_launcher_type``...).
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, field_serializer, field_validator

from langbot_plugin.api.entities._legacy import attach_legacy_config
from langbot_plugin.api.entities.builtin.platform.message import epoch_to_datetime
from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.entities.builtin.provider.prompt import Prompt
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

__all__ = ["Conversation", "LauncherTypes", "Session"]


class LauncherTypes(Enum):
    """Who started a conversation: a person or a group."""

    PERSON = "person"
    GROUP = "group"


def _to_epoch(value: datetime | None) -> float | None:
    return None if value is None else value.timestamp()


def _now() -> datetime:
    return datetime.now(tz=UTC)


class _Timestamps:
    """``create_time`` and ``update_time``: epoch seconds on the wire."""

    @field_validator("create_time", mode="before", check_fields=False)
    @classmethod
    def validate_create_time(cls, value: Any) -> Any:
        return epoch_to_datetime(value)

    @field_validator("update_time", mode="before", check_fields=False)
    @classmethod
    def validate_update_time(cls, value: Any) -> Any:
        return epoch_to_datetime(value)

    @field_serializer("create_time", check_fields=False)
    def serialize_create_time(self, value: datetime | None) -> float | None:
        return _to_epoch(value)

    @field_serializer("update_time", check_fields=False)
    def serialize_update_time(self, value: datetime | None) -> float | None:
        return _to_epoch(value)


class Conversation(BaseModel, _Timestamps):
    """One conversation of a session (a session keeps history and one current)."""

    prompt: Prompt
    messages: list[Message]
    create_time: datetime | None = Field(default_factory=_now)
    update_time: datetime | None = Field(default_factory=_now)
    pipeline_uuid: str
    bot_uuid: str
    #: Binds an external service's conversation (Dify, ...); set by the runner.
    uuid: str | None = None


class Session(WorkspaceExecutionScope, _Timestamps):
    """A chat session, one per launcher (``{launcher_type}_{launcher_id}``)."""

    launcher_type: LauncherTypes
    launcher_id: int | str
    sender_id: int | str | None = 0
    bot_uuid: str | None = None
    use_prompt_name: str | None = "default"
    using_conversation: Conversation | None = None
    conversations: list[Conversation] | None = Field(default_factory=list)
    create_time: datetime | None = Field(default_factory=_now)
    update_time: datetime | None = Field(default_factory=_now)

    _semaphore: Any = PrivateAttr(default=None)

    @field_validator("launcher_type", mode="before")
    @classmethod
    def validate_launcher_type(cls, v: Any) -> LauncherTypes:
        return v if isinstance(v, LauncherTypes) else LauncherTypes(v)

    @field_serializer("launcher_type")
    def serialize_launcher_type(self, v: LauncherTypes, _info: Any = None) -> str:
        return v.value


attach_legacy_config(Conversation, Session)
