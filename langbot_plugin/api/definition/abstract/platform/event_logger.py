"""The logger a platform adapter writes its events to (the host's bot event log)."""

from __future__ import annotations

import abc
from typing import Any

from langbot_plugin.api.entities.builtin.platform.message import Image

__all__ = ["AbstractEventLogger"]


class AbstractEventLogger(abc.ABC):
    """One method per level. ``images`` are attached to the record,
    ``message_session_id`` ties it to a conversation, and with ``no_throw`` a failure
    to record is swallowed rather than raised into the adapter."""

    @abc.abstractmethod
    async def info(
        self,
        text: str,
        images: list[Image] | None = None,
        message_session_id: str | None = None,
        no_throw: bool = True,
    ) -> Any: ...

    # the same signature for every level (each stays abstract under its own name)
    debug = warning = error = info
