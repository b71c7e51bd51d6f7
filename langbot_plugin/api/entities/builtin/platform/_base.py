"""The base class of message components (see :mod:`.message`)."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

__all__ = ["MessageComponent"]


class MessageComponent(BaseModel):
    """One element of a message chain; ``type`` names the component on the wire."""

    #: Validators are built on first use: a process that only relays messages never pays.
    model_config = ConfigDict(defer_build=True)

    type: str
