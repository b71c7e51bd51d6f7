"""Sessions and conversations as the host keeps them.

Times travel as float epoch seconds; on input an epoch number, a ``datetime`` or an
ISO-8601 string is accepted.
"""

from __future__ import annotations

from datetime import UTC, datetime
from enum import Enum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, Field, PlainSerializer, PrivateAttr

from langbot_plugin.api.entities.builtin.provider.message import Message
from langbot_plugin.api.entities.builtin.provider.prompt import Prompt
from langbot_plugin.api.entities.execution import WorkspaceExecutionScope

__all__ = ["Conversation", "EpochDatetime", "LauncherTypes", "Session"]


class LauncherTypes(Enum):
    """Who started a conversation: a person or a group."""

    PERSON = "person"
    GROUP = "group"


def _to_datetime(value: Any) -> Any:
    if isinstance(value, int | float) and not isinstance(value, bool):
        return datetime.fromtimestamp(value, tz=UTC)
    return value


def _now() -> datetime:
    return datetime.now(tz=UTC)


#: A ``datetime`` that is read from and written as epoch seconds.
EpochDatetime = Annotated[
    datetime,
    BeforeValidator(_to_datetime),
    PlainSerializer(lambda value: value.timestamp(), return_type=float),
]

_LauncherType = Annotated[
    LauncherTypes, PlainSerializer(lambda value: value.value, return_type=str)
]


class Conversation(BaseModel):
    """One conversation of a session (a session keeps history and one current)."""

    prompt: Prompt
    messages: list[Message]
    create_time: EpochDatetime | None = Field(default_factory=_now)
    update_time: EpochDatetime | None = Field(default_factory=_now)
    pipeline_uuid: str
    bot_uuid: str
    #: Binds an external service's conversation (Dify, ...); set by the runner.
    uuid: str | None = None


class Session(WorkspaceExecutionScope):
    """A chat session, one per launcher (``{launcher_type}_{launcher_id}``)."""

    launcher_type: _LauncherType
    launcher_id: int | str
    sender_id: int | str | None = 0
    bot_uuid: str | None = None
    use_prompt_name: str | None = "default"
    using_conversation: Conversation | None = None
    conversations: list[Conversation] | None = Field(default_factory=list)
    create_time: EpochDatetime | None = Field(default_factory=_now)
    update_time: EpochDatetime | None = Field(default_factory=_now)

    _semaphore: Any = PrivateAttr(default=None)
