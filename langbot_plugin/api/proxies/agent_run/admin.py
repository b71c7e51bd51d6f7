"""The admin run API of the reference: queue claims, the runtime registry, statistics,
and the run ledger across runs (0.7 ``RunnerAdminAPIProxy``).

Its calls carry no run (a target run is named by ``target_run_id``); the host serves
them only to the plugins its configuration names as admins (``docs/api-entities.md``,
"The run API"). Failures are
:class:`~langbot_plugin.api.entities.builtin.agent_runner.errors.AgentAPIException`
with the run API's codes (``host.malformed_response`` for an answer that does not fit).
"""

from __future__ import annotations

from typing import Any, TypeVar, cast

from pydantic import BaseModel

from langbot_plugin.api.entities.builtin.agent_runner.errors import (
    AgentAPIError,
    AgentAPIException,
)
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    AgentRunEvent,
    RunEventPage,
    RunPage,
)
from langbot_plugin.api.entities.builtin.agent_runner.runtime_registry import (
    AgentRuntime,
    RuntimePage,
)
from langbot_plugin.api.entities.builtin.agent_runner.stats import (
    RunnerStatsPage,
    RunStats,
    RuntimeStats,
)
from langbot_plugin.api.proxies.agent_run.common import map_rpc_error
from langbot_plugin.api.proxies.channel import Channel, as_caller
from langbot_plugin.protocol.host_api import run_ledger as rl
from langbot_plugin.protocol.host_api.common import RunScopedParams
from langbot_plugin.protocol.spec import ActionSpec
from langbot_plugin.rpc.errors import RPCError

__all__ = [
    "AgentAPIError",
    "AgentAPIException",
    "AgentRun",
    "AgentRunAdminAPIProxy",
    "AgentRunEvent",
    "AgentRunResult",
    "AgentRuntime",
    "RunEventPage",
    "RunPage",
    "RunStats",
    "RunnerStatsPage",
    "RuntimePage",
    "RuntimeStats",
]

P = TypeVar("P", bound=BaseModel)
R = TypeVar("R")


class AgentRunAdminAPIProxy:
    """Admin run APIs for plugins the host authorizes (see the module docstring).

    ``AgentRunAdminAPIProxy(plugin_runtime_handler)``: an RPC session, or an object with
    the reference's ``call_action`` (a test's fake handler).
    """

    def __init__(self, plugin_runtime_handler: Channel | None = None) -> None:
        self.plugin_runtime_handler = plugin_runtime_handler

    async def _raw(self, spec: ActionSpec[P, R], params: P, wait: float) -> Any:
        payload = spec.dump_params(params)
        try:
            return await spec.relay(as_caller(self.plugin_runtime_handler), payload, timeout=wait)
        except (RPCError, TimeoutError, ConnectionError) as exc:
            raise map_rpc_error(spec.name, exc) from exc

    async def _call(self, spec: ActionSpec[P, R], params: P, wait: float) -> R:
        answer = await self._raw(spec, params, wait)
        try:
            return spec.parse_result(answer)
        except RPCError as exc:
            raise map_rpc_error(spec.name, exc) from exc

    # ------------------------------------------------------------------ the ledger

    async def run_get(self, run_id: str) -> AgentRun:
        """Any run's record."""
        return await self._call(rl.RUN_GET, rl.RunTargetParams(target_run_id=run_id), 15.0)

    async def run_list(
        self,
        conversation_id: str | None = None,
        statuses: list[str] | None = None,
        before_cursor: str | None = None,
        limit: int = 50,
    ) -> RunPage:
        """Runs, newest first (every conversation unless one is named)."""
        params = rl.RunListParams(
            conversation_id=conversation_id,
            statuses=statuses,
            before_cursor=before_cursor,
            limit=limit,
        )
        return await self._call(rl.RUN_LIST, params, 30.0)

    async def run_events_page(
        self,
        run_id: str,
        before_cursor: str | None = None,
        after_cursor: str | None = None,
        limit: int = 50,
        direction: str = "forward",
    ) -> RunEventPage:
        """A page of a run's results."""
        params = rl.RunEventsPageParams(
            target_run_id=run_id,
            before_cursor=before_cursor,
            after_cursor=after_cursor,
            limit=limit,
            direction=direction,
        )
        return await self._call(rl.RUN_EVENTS_PAGE, params, 30.0)

    async def run_cancel(self, run_id: str, reason: str | None = None) -> AgentRun:
        """Ask for a run to be cancelled."""
        params = rl.RunCancelParams(target_run_id=run_id, reason=reason)
        return await self._call(rl.RUN_CANCEL, params, 15.0)

    async def run_append_result(self, result: AgentRunResult) -> AgentRunEvent:
        """Append a result to the run it names (``result.run_id``)."""
        params = rl.RunAppendParams(
            target_run_id=result.run_id, result=result.model_dump(mode="json")
        )
        return await self._call(rl.RUN_APPEND_RESULT, params, 15.0)

    async def run_finalize(  # noqa: PLR0917 -- reference signature
        self,
        run_id: str,
        status: str,
        reason: str | None = None,
        usage: dict[str, Any] | None = None,
        cost: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
    ) -> AgentRun:
        """End a run with ``status``."""
        params = rl.RunFinalizeParams(
            target_run_id=run_id,
            status=status,
            reason=reason,
            usage=usage,
            cost=cost,
            metadata=metadata,
        )
        return await self._call(rl.RUN_FINALIZE, params, 15.0)

    # ------------------------------------------------------------------ runtimes

    async def runtime_register(  # noqa: PLR0917 -- reference signature
        self,
        runtime_id: str,
        status: str = "online",
        display_name: str | None = None,
        endpoint: str | None = None,
        version: str | None = None,
        capabilities: dict[str, Any] | None = None,
        labels: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        heartbeat_deadline_at: float | None = None,
    ) -> AgentRuntime:
        """Register (or update) a runtime that claims runs, with a first heartbeat."""
        params = rl.RuntimeRegisterParams(
            runtime_id=runtime_id,
            status=status,
            display_name=display_name,
            endpoint=endpoint,
            version=version,
            capabilities=capabilities or {},
            labels=labels or {},
            metadata=metadata or {},
            heartbeat_deadline_at=heartbeat_deadline_at,
        )
        return await self._call(rl.RUNTIME_REGISTER, params, 15.0)

    async def runtime_heartbeat(  # noqa: PLR0917 -- reference signature
        self,
        runtime_id: str,
        status: str = "online",
        capabilities: dict[str, Any] | None = None,
        labels: dict[str, Any] | None = None,
        metadata: dict[str, Any] | None = None,
        heartbeat_deadline_at: float | None = None,
    ) -> AgentRuntime:
        """A registered runtime's heartbeat (``None`` fields stay as they were)."""
        params = rl.RuntimeRegisterParams(
            runtime_id=runtime_id,
            status=status,
            capabilities=capabilities,
            labels=labels,
            metadata=metadata,
            heartbeat_deadline_at=heartbeat_deadline_at,
        )
        return await self._call(rl.RUNTIME_HEARTBEAT, params, 10.0)

    async def runtime_list(
        self,
        statuses: list[str] | None = None,
        labels: dict[str, str] | None = None,
        cursor: str | None = None,
        limit: int = 50,
    ) -> RuntimePage:
        """The registered runtimes."""
        params = rl.RuntimeListParams(
            statuses=statuses, labels=labels or {}, cursor=cursor, limit=limit
        )
        return await self._call(rl.RUNTIME_LIST, params, 15.0)

    async def runner_list(self, include_plugins: list[str] | None = None) -> list[dict[str, Any]]:
        """The runners the host knows (descriptors)."""
        params = rl.RunnerListParams(include_plugins=include_plugins)
        answer = await self._raw(rl.RUNNER_LIST, params, 15.0)
        if isinstance(answer, list):  # a host may answer the bare list (the reference takes it)
            return cast(list[dict[str, Any]], answer)
        items = answer.get("items") if isinstance(answer, dict) else None
        if isinstance(items, list):
            return cast(list[dict[str, Any]], items)
        raise AgentAPIException.of(
            "host.malformed_response",
            "runner_list answer must be a list or carry an items list",
            details={"action": rl.RUNNER_LIST.name},
        )

    async def runtime_reconcile(self, stale_after_seconds: float | None = None) -> dict[str, Any]:
        """Mark runtimes past their heartbeat stale and release expired claims."""
        params = rl.RuntimeReconcileParams(stale_after_seconds=stale_after_seconds)
        answer = await self._call(rl.RUNTIME_RECONCILE, params, 30.0)
        return answer.model_dump(mode="json", exclude_unset=True)  # the host's keys as sent

    # ------------------------------------------------------------------ claims

    async def run_claim(
        self,
        runtime_id: str,
        queue_name: str | None = None,
        lease_seconds: int = 60,
        runner_ids: list[str] | None = None,
    ) -> AgentRun:
        """Claim the next queued run for ``runtime_id`` (a lease of ``lease_seconds``)."""
        params = rl.RunClaimParams(
            runtime_id=runtime_id,
            queue_name=queue_name,
            lease_seconds=lease_seconds,
            runner_ids=runner_ids,
        )
        return await self._call(rl.RUN_CLAIM, params, 15.0)

    async def run_renew_claim(
        self, run_id: str, runtime_id: str, claim_token: str, lease_seconds: int = 60
    ) -> AgentRun:
        """Extend the claim ``runtime_id`` holds on a run."""
        params = rl.RunLeaseParams(
            target_run_id=run_id,
            runtime_id=runtime_id,
            claim_token=claim_token,
            lease_seconds=lease_seconds,
        )
        return await self._call(rl.RUN_RENEW_CLAIM, params, 15.0)

    async def run_release_claim(
        self, run_id: str, runtime_id: str, claim_token: str, reason: str | None = None
    ) -> AgentRun:
        """Give a claimed run back to the queue."""
        params = rl.RunLeaseParams(
            target_run_id=run_id, runtime_id=runtime_id, claim_token=claim_token, reason=reason
        )
        return await self._call(rl.RUN_RELEASE_CLAIM, params, 15.0)

    # ------------------------------------------------------------------ statistics

    async def run_stats(
        self,
        start_time: int | None = None,
        end_time: int | None = None,
        runner_id: str | None = None,
    ) -> RunStats:
        """Run counts and timings in a time window (epoch seconds)."""
        params = rl.RunStatsParams(start_time=start_time, end_time=end_time, runner_id=runner_id)
        return await self._call(rl.RUN_STATS, params, 30.0)

    async def runtime_stats(self) -> RuntimeStats:
        """Runtime counts and heartbeat health."""
        return await self._call(rl.RUNTIME_STATS, RunScopedParams(), 15.0)

    async def runner_stats(
        self, start_time: int | None = None, end_time: int | None = None, limit: int = 50
    ) -> RunnerStatsPage:
        """Runs per runner in a time window."""
        params = rl.RunnerStatsParams(start_time=start_time, end_time=end_time, limit=limit)
        return await self._call(rl.RUNNER_STATS, params, 30.0)
