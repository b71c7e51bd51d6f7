"""A named prompt: the messages placed before a conversation."""

from __future__ import annotations

from pydantic import BaseModel

from langbot_plugin.api.entities.builtin.provider.message import Message

__all__ = ["Prompt"]


class Prompt(BaseModel):
    """A prompt (scenario preset) and its messages."""

    name: str
    messages: list[Message]
