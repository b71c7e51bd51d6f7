"""Run-scoped pulls of context: prompt, history, events and steering input."""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIError,
    AgentAPIException,
)
from langbot_plugin.api.entities.builtin.agent_runner.page_results import (
    AgentEventRecord,
    EventPage,
    HistoryPage,
    HistorySearchResult,
)
from langbot_plugin.api.entities.builtin.agent_runner.steering import SteeringPullResult
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase
from langbot_plugin.protocol.host_api import run_context as rc
from langbot_plugin.protocol.host_api.common import RunScopedParams

__all__ = [
    "AgentAPIError",
    "AgentAPIException",
    "AgentEventRecord",
    "AgentRunContextAPIMixin",
    "EventPage",
    "HistoryPage",
    "HistorySearchResult",
    "SteeringPullResult",
]

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
        self._require(rc.GET_PROMPT)
        return (await self._send(rc.GET_PROMPT, RunScopedParams())).prompt

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
        self._require(rc.HISTORY_PAGE)
        self._check_limit(limit)
        if direction not in _DIRECTIONS:
            raise self._invalid(f"direction must be one of {_DIRECTIONS}", direction=direction)
        params = rc.HistoryPageParams(
            conversation_id=conversation_id,
            before_cursor=before_cursor,
            after_cursor=after_cursor,
            limit=limit,
            direction=direction,
            include_attachments=include_attachments,
        )
        return await self._send(rc.HISTORY_PAGE, params)

    async def history_search(
        self, query: str, filters: dict[str, Any] | None = None, top_k: int = 10
    ) -> HistorySearchResult:
        """Transcript items matching ``query``."""
        self._require(rc.HISTORY_SEARCH)
        self._check_limit(top_k)
        params = rc.HistorySearchParams(query=query, filters=filters or {}, top_k=top_k)
        return await self._send(rc.HISTORY_SEARCH, params)

    async def event_get(self, event_id: str) -> AgentEventRecord:
        """One recorded event."""
        self._require(rc.EVENT_GET)
        return await self._send(rc.EVENT_GET, rc.EventGetParams(event_id=event_id))

    async def event_page(
        self,
        conversation_id: str | None = None,
        event_types: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> EventPage:
        """A page of recorded events, optionally of some types only."""
        self._require(rc.EVENT_PAGE)
        self._check_limit(limit)
        params = rc.EventPageParams(
            conversation_id=conversation_id,
            event_types=event_types,
            before_cursor=before_cursor,
            limit=limit,
        )
        return await self._send(rc.EVENT_PAGE, params)

    async def steering_pull(
        self, mode: str = "all", limit: int | None = None
    ) -> SteeringPullResult:
        """Follow-up input queued for this run: ``all`` of it or ``one`` item, in order."""
        self._require(rc.STEERING_PULL)
        if mode not in _STEERING_MODES:
            raise self._invalid(f"mode must be one of {_STEERING_MODES}", mode=mode)
        self._check_limit(limit, allow_none=True)
        return await self._send(rc.STEERING_PULL, rc.SteeringPullParams(mode=mode, limit=limit))
