"""The base class of message components (see :mod:`.message`)."""

from __future__ import annotations

from pydantic import BaseModel

__all__ = ["MessageComponent"]


class MessageComponent(BaseModel):
    """One element of a message chain; ``type`` names the component on the wire."""

    type: str
