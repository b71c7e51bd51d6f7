"""What a host's action handler returns: :class:`ActionResponse` (``success`` or ``error``)."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, Field

__all__ = ["ActionResponse", "ChunkStatus"]


class ChunkStatus(Enum):
    """Whether a streamed answer goes on or ends."""

    CONTINUE = "continue"
    END = "end"


class ActionResponse(BaseModel):
    """One answer: ``code`` 0 with ``data``, or an error ``message``."""

    seq_id: int | None = None
    code: int
    message: str
    data: dict[str, Any] = Field(default_factory=dict[str, Any])
    chunk_status: ChunkStatus = ChunkStatus.CONTINUE
    stream_index: int | None = None

    @classmethod
    def success(cls, data: dict[str, Any]) -> ActionResponse:
        return cls(seq_id=0, code=0, message="success", data=data)

    @classmethod
    def error(cls, message: str, data: dict[str, Any] | None = None) -> ActionResponse:
        return cls(code=1, message=message, data=data or {})
