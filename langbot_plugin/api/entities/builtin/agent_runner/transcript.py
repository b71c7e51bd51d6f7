"""One item of a conversation's transcript, as the history APIs return it."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HOST_RESPONSE_MODEL_CONFIG

__all__ = ["TranscriptItem"]


class TranscriptItem(BaseModel):
    """A transcript projection (never the raw platform payload)."""

    model_config = HOST_RESPONSE_MODEL_CONFIG

    transcript_id: str
    event_id: str
    conversation_id: str | None = None
    bot_id: str | None = None
    workspace_id: str | None = None
    thread_id: str | None = None
    role: str
    item_type: str = "message"
    content: str | None = None
    content_json: dict[str, Any] | None = None
    attachment_refs: list[dict[str, Any]] = Field(default_factory=list)
    seq: int | None = None
    cursor: str | None = None
    created_at: int | None = None
    metadata: dict[str, Any] = Field(default_factory=dict)
