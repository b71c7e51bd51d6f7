"""Members the reference models expose because of how they were written, kept so code
that touches them keeps working (``docs/api-entities.md``, "Members kept from the
reference's way of writing models"): the read-only ``Model.Config`` mirror
(:func:`attach_legacy_config`) and the named message-chain validators and serializers
(the mixins below).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from typing import Any, cast

from pydantic import BaseModel, SerializerFunctionWrapHandler, field_serializer, field_validator

from langbot_plugin.api.entities.builtin.platform.message import MessageChain

__all__ = [
    "MessageChainFields",
    "NewContentField",
    "ReplyMessageChainField",
    "attach_legacy_config",
]


@cache
def _config_class(model: type[BaseModel]) -> type:
    namespace: dict[str, Any] = dict(model.model_config)
    namespace["__doc__"] = f"The configuration of {model.__name__} (mirrors model_config)."
    return type("Config", (), namespace)


class _LegacyConfig:
    """A class attribute that is the ``Config`` mirror of the class it is read on."""

    def __get__(self, instance: object, owner: type[BaseModel]) -> type:
        return _config_class(owner)


def attach_legacy_config(*models: type[BaseModel]) -> None:
    """Give ``models`` (and their subclasses) a ``Config`` attribute."""
    for model in models:
        setattr(model, "Config", _LegacyConfig())  # noqa: B010 -- not a pydantic config


def _as_chain(value: Any) -> Any:
    if value is None or isinstance(value, MessageChain):
        return value
    return MessageChain.model_validate(value)


class MessageChainFields:
    """``message_chain`` and (where a class has it) ``message_event``, under the
    reference's validator and serializer names."""

    @field_validator("message_chain", mode="before", check_fields=False)
    @classmethod
    def validate_message_chain(cls, value: Any) -> Any:
        return _as_chain(value)

    @field_serializer("message_chain", mode="wrap", check_fields=False)
    def serialize_message_chain(self, value: Any, handler: SerializerFunctionWrapHandler) -> Any:
        return handler(value)

    @field_validator("message_event", mode="before", check_fields=False)
    @classmethod
    def validate_message_event(cls, value: Any) -> Any:
        """A mapping becomes the event class the field declares (``FriendMessage`` or
        ``GroupMessage``)."""
        if not isinstance(value, Mapping):
            return value
        declared = cast(type[BaseModel], cls).model_fields["message_event"].annotation
        if isinstance(declared, type) and issubclass(declared, BaseModel):
            return declared.model_validate(value)
        return value

    @field_serializer("message_event", mode="wrap", check_fields=False)
    def serialize_message_event(self, value: Any, handler: SerializerFunctionWrapHandler) -> Any:
        return handler(value)


class ReplyMessageChainField:
    """``reply_message_chain`` (optional) under the reference's names."""

    @field_validator("reply_message_chain", mode="before", check_fields=False)
    @classmethod
    def validate_reply_message_chain(cls, value: Any) -> Any:
        return _as_chain(value)

    @field_serializer("reply_message_chain", mode="wrap", check_fields=False)
    def serialize_reply_message_chain(
        self, value: Any, handler: SerializerFunctionWrapHandler
    ) -> Any:
        return handler(value)


class NewContentField:
    """``new_content`` of an edited message under the reference's names."""

    @field_validator("new_content", mode="before", check_fields=False)
    @classmethod
    def validate_new_content(cls, value: Any) -> Any:
        return _as_chain(value)

    @field_serializer("new_content", mode="wrap", check_fields=False)
    def serialize_new_content(self, value: Any, handler: SerializerFunctionWrapHandler) -> Any:
        return handler(value)
