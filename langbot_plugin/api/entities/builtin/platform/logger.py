"""Event log records kept by the host for a bot."""

from __future__ import annotations

import enum
from typing import Any

from pydantic import BaseModel

__all__ = ["EventLog", "EventLogLevel"]


class EventLogLevel(enum.Enum):
    """Severity of an :class:`EventLog`."""

    DEBUG = "debug"
    INFO = "info"
    WARNING = "warning"
    ERROR = "error"


class EventLog(BaseModel):
    """One line of a bot's event log; ``images`` are host file ids."""

    seq_id: int
    timestamp: int
    level: EventLogLevel
    text: str
    images: list[str] | None = None
    message_session_id: str | None = None

    def to_json(self) -> dict[str, Any]:
        """The record as a JSON-ready dict (the level as its string value)."""
        return self.model_dump(mode="json")
