"""Run-scoped pulls of context: prompt, history, events and steering input."""

from __future__ import annotations

from typing import Any, cast

from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
    AgentEventRecord,
    EventPage,
    HistoryPage,
    HistorySearchResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.steering import SteeringPullResult
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase

__all__ = ["AgentRunContextAPIMixin"]

_DIRECTIONS = ("backward", "forward")
_STEERING_MODES = ("all", "one", "one-at-a-time")


class AgentRunContextAPIMixin(AgentRunProxyBase):
    """Prompt, history, events and steering; each needs its ``available_apis`` flag."""

    def _check_limit(self, limit: int | None, *, allow_none: bool = False) -> None:
        if limit is None and allow_none:
            return
        if isinstance(limit, bool) or not isinstance(limit, int) or limit <= 0:
            raise self._invalid(f"limit must be a positive integer, not {limit!r}", limit=limit)

    async def get_prompt(self) -> list[dict[str, Any]]:
        """The host's effective prompt for this run (empty: use ``ctx.config``)."""
        self._require_api("prompt_get")
        prompt = self._expect(await self._call("get_prompt", {}), "prompt", "get_prompt")
        if not isinstance(prompt, list):
            raise self._malformed(
                "get_prompt", "response field prompt must be a list", field="prompt"
            )
        return cast(list[dict[str, Any]], prompt)

    async def history_page(  # noqa: PLR0917 -- reference signature
        self,
        conversation_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "backward",
        include_attachments: bool = False,
    ) -> HistoryPage:
        """A page of the conversation's transcript (``conversation_id`` None: this
        run's conversation). ``backward`` pages go to older items."""
        self._require_api("history_page")
        self._check_limit(limit)
        if direction not in _DIRECTIONS:
            raise self._invalid(f"direction must be one of {_DIRECTIONS}", direction=direction)
        data = {
            "conversation_id": conversation_id,
            "before_cursor": before_cursor,
            "after_cursor": after_cursor,
            "limit": limit,
            "direction": direction,
            "include_attachments": include_attachments,
        }
        answer = await self._call("history_page", data, default_timeout=30.0)
        return self._model(HistoryPage, answer, "history_page")

    async def history_search(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10
    ) -> HistorySearchResult:
        """Transcript items matching ``query``."""
        self._require_api("history_search")
        self._check_limit(top_k)
        data = {"query": query, "filters": filters or {}, "top_k": top_k}
        answer = await self._call("history_search", data, default_timeout=30.0)
        return self._model(HistorySearchResult, answer, "history_search")

    async def event_get(self, event_id: str) -> AgentEventRecord:
        """One recorded event."""
        self._require_api("event_get")
        answer = await self._call("event_get", {"event_id": event_id})
        return self._model(AgentEventRecord, answer, "event_get")

    async def event_page(
        self,
        conversation_id: str | None = None,
        event_types: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> EventPage:
        """A page of recorded events, optionally of some types only."""
        self._require_api("event_page")
        self._check_limit(limit)
        data = {
            "conversation_id": conversation_id,
            "event_types": event_types,
            "before_cursor": before_cursor,
            "limit": limit,
        }
        answer = await self._call("event_page", data, default_timeout=30.0)
        return self._model(EventPage, answer, "event_page")

    async def steering_pull(
        self, mode: str = "all", limit: int | None = None
    ) -> SteeringPullResult:
        """Follow-up input queued for this run: ``all`` of it or ``one`` item, in order."""
        self._require_api("steering_pull")
        if mode not in _STEERING_MODES:
            raise self._invalid(f"mode must be one of {_STEERING_MODES}", mode=mode)
        self._check_limit(limit, allow_none=True)
        answer = await self._call(
            "steering_pull", {"mode": mode, "limit": limit}, default_timeout=10.0
        )
        return self._model(SteeringPullResult, answer, "steering_pull")
