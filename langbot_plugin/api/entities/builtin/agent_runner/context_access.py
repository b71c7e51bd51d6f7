"""How much context the host put into the run, and which context APIs it may call."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from langbot_plugin.api.entities.builtin.agent_runner.compat import HostContextModel

__all__ = ["ContextAPICapabilities", "ContextAccess", "InlineContextMode", "InlineContextPolicy"]

InlineContextMode = Literal["none", "current_event", "recent_tail", "summary_tail"]


class InlineContextPolicy(HostContextModel):
    """What history the host inlined into the context (usually just the event)."""

    mode: InlineContextMode | str = "current_event"
    delivered_count: int = 0
    source_total_count: int | None = None
    messages_complete: bool = False
    reason: str | None = None


class ContextAPICapabilities(HostContextModel):
    """Which run-scoped context APIs the host allows; anything not true is refused.

    ``box`` and ``reply_stream`` are the 0.7 additions (a 0.5 host never sends them, so
    they read false there). Keys a newer host adds (the claim and runtime-registry flags
    of 0.7 hosts) are kept as extra attributes and answered by :meth:`allows`.
    """

    prompt_get: bool = False
    history_page: bool = False
    history_search: bool = False
    event_get: bool = False
    event_page: bool = False
    state: bool = False
    storage: bool = False
    steering_pull: bool = False
    run_get: bool = False
    run_list: bool = False
    run_events_page: bool = False
    run_cancel: bool = False
    run_append_result: bool = False
    run_finalize: bool = False
    #: The run may bind a Box and move files in and out of it.
    box: bool = False
    #: The run may send an explicit streaming reply (independent of model streaming).
    reply_stream: bool = False

    def allows(self, name: str) -> bool:
        """Whether the API ``name`` is available (unknown names: only if the host said true)."""
        return getattr(self, name, False) is True


class ContextAccess(HostContextModel):
    """Pointers into the conversation's history and the context-API grants."""

    conversation_id: str | None = None
    thread_id: str | None = None
    latest_cursor: str | None = None
    event_seq: int | None = None
    transcript_seq: int | None = None
    has_history_before: bool = False
    inline_policy: InlineContextPolicy = Field(default_factory=InlineContextPolicy)
    available_apis: ContextAPICapabilities = Field(default_factory=ContextAPICapabilities)
