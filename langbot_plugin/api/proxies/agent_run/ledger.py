"""Run-scoped access to the host's run ledger (this run by default)."""

from __future__ import annotations

from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    AgentRunEvent,
    RunEventPage,
    RunPage,
)
from langbot_plugin.api.proxies.agent_run.common import AgentRunProxyBase
from langbot_plugin.protocol.host_api import run_ledger as rl

__all__ = ["AgentRunLedgerAPIMixin"]


class AgentRunLedgerAPIMixin(AgentRunProxyBase):
    """Runs and their events; each needs its ``available_apis`` flag. A ``run_id``
    other than this run's is sent as ``target_run_id`` for the host to authorize."""

    async def run_get(self, run_id: str | None = None) -> AgentRun:
        """A run (this one by default); poll ``cancel_requested_at`` to see a cancel."""
        self._require(rl.RUN_GET)
        return await self._send(rl.RUN_GET, rl.RunTargetParams(target_run_id=run_id or self.run_id))

    async def run_list(
        self,
        conversation_id: str | None = None,
        statuses: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> RunPage:
        """A page of runs, optionally of one conversation or some statuses."""
        self._require(rl.RUN_LIST)
        params = rl.RunListParams(
            conversation_id=conversation_id,
            statuses=statuses,
            before_cursor=before_cursor,
            limit=limit,
        )
        return await self._send(rl.RUN_LIST, params)

    async def run_events_page(
        self,
        run_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "forward",
    ) -> RunEventPage:
        """A page of a run's recorded result events."""
        self._require(rl.RUN_EVENTS_PAGE)
        params = rl.RunEventsPageParams(
            target_run_id=run_id or self.run_id,
            before_cursor=before_cursor,
            after_cursor=after_cursor,
            limit=limit,
            direction=direction,
        )
        return await self._send(rl.RUN_EVENTS_PAGE, params)

    async def run_cancel(self, run_id: str | None = None, reason: str | None = None) -> AgentRun:
        """Ask the host to cancel a run (this one by default)."""
        self._require(rl.RUN_CANCEL)
        params = rl.RunCancelParams(target_run_id=run_id or self.run_id, reason=reason)
        return await self._send(rl.RUN_CANCEL, params)

    async def run_append_result(self, result: AgentRunResult) -> AgentRunEvent:
        """Record a result on the result's run without streaming it."""
        self._require(rl.RUN_APPEND_RESULT)
        params = rl.RunAppendParams(
            target_run_id=result.run_id, result=result.model_dump(mode="json")
        )
        return await self._send(rl.RUN_APPEND_RESULT, params)

    async def run_finalize(
        self, run_id: str | None = None, status: str | None = None, reason: str | None = None
    ) -> AgentRun:
        """Set a run's final status."""
        self._require(rl.RUN_FINALIZE)
        params = rl.RunFinalizeParams(
            target_run_id=run_id or self.run_id, status=status, reason=reason
        )
        return await self._send(rl.RUN_FINALIZE, params)
