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

__all__ = ["AgentRunLedgerAPIMixin"]


class AgentRunLedgerAPIMixin(AgentRunProxyBase):
    """Runs and their events; each needs its ``available_apis`` flag. A ``run_id``
    other than this run's is sent as ``target_run_id`` for the host to authorize."""

    async def run_get(self, run_id: str | None = None) -> AgentRun:
        """A run (this one by default); poll ``cancel_requested_at`` to see a cancel."""
        self._require_api("run_get")
        answer = await self._call("run_get", {"target_run_id": run_id or self.run_id})
        return self._model(AgentRun, answer, "run_get")

    async def run_list(
        self,
        conversation_id: str | None = None,
        statuses: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> RunPage:
        """A page of runs, optionally of one conversation or some statuses."""
        self._require_api("run_list")
        data = {
            "conversation_id": conversation_id,
            "statuses": statuses,
            "before_cursor": before_cursor,
            "limit": limit,
        }
        return self._model(
            RunPage, await self._call("run_list", data, default_timeout=30.0), "run_list"
        )

    async def run_events_page(
        self,
        run_id: str | None = None,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "forward",
    ) -> RunEventPage:
        """A page of a run's recorded result events."""
        self._require_api("run_events_page")
        data = {
            "target_run_id": run_id or self.run_id,
            "before_cursor": before_cursor,
            "after_cursor": after_cursor,
            "limit": limit,
            "direction": direction,
        }
        answer = await self._call("run_events_page", data, default_timeout=30.0)
        return self._model(RunEventPage, answer, "run_events_page")

    async def run_cancel(self, run_id: str | None = None, reason: str | None = None) -> AgentRun:
        """Ask the host to cancel a run (this one by default)."""
        self._require_api("run_cancel")
        data = {"target_run_id": run_id or self.run_id, "reason": reason}
        return self._model(AgentRun, await self._call("run_cancel", data), "run_cancel")

    async def run_append_result(self, result: AgentRunResult) -> AgentRunEvent:
        """Record a result on the result's run without streaming it."""
        self._require_api("run_append_result")
        data = {"target_run_id": result.run_id, "result": result.model_dump(mode="json")}
        answer = await self._call("run_append_result", data)
        return self._model(AgentRunEvent, answer, "run_append_result")

    async def run_finalize(
        self, run_id: str | None = None, status: str | None = None, reason: str | None = None
    ) -> AgentRun:
        """Set a run's final status."""
        self._require_api("run_finalize")
        data = {"target_run_id": run_id or self.run_id, "status": status, "reason": reason}
        return self._model(AgentRun, await self._call("run_finalize", data), "run_finalize")
