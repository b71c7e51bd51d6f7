"""The admin run API of the service table: runtimes, claims, statistics, the runner list.

The released host serves these (and the run ledger without a run) to the plugins its
configuration names as admins, by the caller's plugin identity; :class:`AdminAccess`
is that configuration here (``RunHost(admins={"author/plugin": ["agent_run:admin"]})``;
``domain:*``, ``runner:admin`` and ``*`` cover ``domain:action``, as the released host
reads them). ``agent_run:admin`` opens the ledger across runs, ``runner_list`` and the
``*_stats``; ``runtime:admin`` the runtime and claim actions, which a run may also make
with its ``available_apis`` flag on. Runtimes live in memory (:class:`RuntimeRegistry`);
this host queues no runs, so ``run_claim`` answers ``not_found`` as the released host
does with an empty queue.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import AgentRun
from langbot_plugin.api.entities.builtin.agent_runner.runtime_registry import (
    AgentRuntime,
    RuntimePage,
)
from langbot_plugin.api.entities.builtin.agent_runner.stats import (
    RunnerStatsPage,
    RunStats,
    RuntimeStats,
)
from langbot_plugin.host.errors import RunNotLiveError
from langbot_plugin.host.paging import MAX_PAGE, parse_cursor
from langbot_plugin.host.registry import TERMINAL_STATUSES, RunSession
from langbot_plugin.protocol.host_api import run_ledger as rl
from langbot_plugin.protocol.host_api.common import RunScopedParams
from langbot_plugin.protocol.spec import ActionSpec, ActionTable
from langbot_plugin.rpc import RequestContext
from langbot_plugin.rpc.errors import NotFoundError, PermissionDeniedError

if TYPE_CHECKING:
    from langbot_plugin.host.services import RunServices

__all__ = [
    "AGENT_RUN_ADMIN",
    "RUNTIME_ADMIN",
    "AdminAccess",
    "ListRunners",
    "RuntimeRegistry",
    "register_admin_actions",
]

AGENT_RUN_ADMIN = "agent_run:admin"
RUNTIME_ADMIN = "runtime:admin"
#: Lists the runners the host knows (descriptors), for ``runner_list``.
ListRunners = Callable[[list[str] | None], Awaitable[list[dict[str, Any]]]]


class AdminAccess:
    """Which plugins are admins, with which permissions (see the module docstring)."""

    def __init__(self, plugins: Mapping[str, Iterable[str]] | None = None) -> None:
        self._plugins = {name: frozenset(perms) for name, perms in (plugins or {}).items()}

    def allows(self, identity: str | None, permission: str) -> bool:
        granted = self._plugins.get(identity or "", frozenset())
        domain = permission.split(":", 1)[0]
        return bool(granted & {permission, f"{domain}:*", "runner:admin", "*"})


class RuntimeRegistry:
    """External runtimes that claim runs, each with a heartbeat deadline (in memory)."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._runtimes: dict[str, dict[str, Any]] = {}

    def _deadline(self, deadline_at: float | None, now: float) -> int:
        return int(deadline_at) if deadline_at is not None else int(now) + 60

    def register(self, p: rl.RuntimeRegisterParams) -> AgentRuntime:
        now = self._clock()
        known = self._runtimes.get(p.runtime_id)
        record: dict[str, Any] = {
            **p.model_dump(include={"runtime_id", "status", "display_name", "endpoint", "version"}),
            "capabilities": dict(p.capabilities or {}),
            "labels": {str(k): str(v) for k, v in (p.labels or {}).items()},
            "metadata": dict(p.metadata or {}),
            "last_heartbeat_at": int(now),
            "heartbeat_deadline_at": self._deadline(p.heartbeat_deadline_at, now),
            "created_at": known["created_at"] if known else int(now),
            "updated_at": int(now),
        }
        self._runtimes[p.runtime_id] = record
        return AgentRuntime.model_validate(record)

    def heartbeat(self, p: rl.RuntimeRegisterParams) -> AgentRuntime:
        record = self._runtimes.get(p.runtime_id)
        if record is None:
            raise NotFoundError(
                f"Runtime {p.runtime_id} not found", details={"runtime_id": p.runtime_id}
            )
        now = self._clock()
        record.update(
            status=p.status,
            last_heartbeat_at=int(now),
            heartbeat_deadline_at=self._deadline(p.heartbeat_deadline_at, now),
            updated_at=int(now),
        )
        if p.capabilities is not None:
            record["capabilities"] = dict(p.capabilities)
        if p.labels is not None:
            record["labels"] = {str(k): str(v) for k, v in p.labels.items()}
        if p.metadata is not None:
            record["metadata"] = {**record["metadata"], **p.metadata}
        return AgentRuntime.model_validate(record)

    def page(self, p: rl.RuntimeListParams) -> RuntimePage:
        wanted = set(p.statuses or [])
        labels = p.labels or {}
        found = [
            r
            for r in self._runtimes.values()
            if (not wanted or r["status"] in wanted)
            and all(r["labels"].get(k) == v for k, v in labels.items())
        ]
        start = parse_cursor(p.cursor, "cursor") or 0
        limit = max(1, min(p.limit, MAX_PAGE))
        page = found[start : start + limit]
        more = start + limit < len(found)
        return RuntimePage.model_validate(
            {
                "items": page,
                "next_cursor": str(start + limit) if more else None,
                "prev_cursor": None,
                "has_more": more,
                "total_count": len(found),
            }
        )

    def mark_stale(self, stale_after_seconds: float | None) -> list[dict[str, Any]]:
        now = self._clock()
        stale: list[dict[str, Any]] = []
        for record in self._runtimes.values():
            late = record["heartbeat_deadline_at"] < now or (
                stale_after_seconds is not None
                and record["last_heartbeat_at"] < now - max(stale_after_seconds, 0)
            )
            if late and record["status"] != "stale":
                record.update(status="stale", updated_at=int(now))
                stale.append(dict(record))
        return stale

    def stats(self, active_runs: int) -> RuntimeStats:
        now = self._clock()
        ages = [now - r["last_heartbeat_at"] for r in self._runtimes.values()]
        return RuntimeStats(
            total_count=len(self._runtimes),
            online_count=sum(r["status"] == "online" for r in self._runtimes.values()),
            stale_count=sum(r["status"] == "stale" for r in self._runtimes.values()),
            avg_heartbeat_age_seconds=statistics.fmean(ages) if ages else None,
            max_heartbeat_age_seconds=max(ages) if ages else None,
            active_runs=active_runs,
            claimed_runs=0,
        )


@dataclass(eq=False)
class _Admin:
    """The handlers, over the services' registry and the host's admin configuration."""

    services: RunServices
    runtimes: RuntimeRegistry
    runners: ListRunners | None

    def caller(
        self,
        run_id: str | None,
        ctx: RequestContext,
        permission: str,
        spec: ActionSpec[Any, Any] | None,
    ) -> RunSession | None:
        """``None`` for an admin call; the run for a run's call of ``spec`` (its
        ``available_apis`` flag on; ``None``: admins only); else the refusal."""
        if run_id is None or run_id == "":
            if self.services.admins.allows(self.services.identify(ctx), permission):
                return None
            raise PermissionDeniedError(
                f"{ctx.request.action} access not authorized: the host names this plugin "
                f"no {permission} admin",
                details={"action": ctx.request.action, "permission": permission},
            )
        if spec is None:
            raise RunNotLiveError(
                f"{ctx.request.action} is an admin action: call it without a run",
                details={"action": ctx.request.action, "run_id": run_id},
            )
        return self.services.session(run_id, ctx, spec)

    async def register(self, p: rl.RuntimeRegisterParams, ctx: RequestContext) -> AgentRuntime:
        self.caller(p.run_id, ctx, RUNTIME_ADMIN, rl.RUNTIME_REGISTER)
        return self.runtimes.register(p)

    async def heartbeat(self, p: rl.RuntimeRegisterParams, ctx: RequestContext) -> AgentRuntime:
        self.caller(p.run_id, ctx, RUNTIME_ADMIN, rl.RUNTIME_HEARTBEAT)
        return self.runtimes.heartbeat(p)

    async def runtime_list(self, p: rl.RuntimeListParams, ctx: RequestContext) -> RuntimePage:
        self.caller(p.run_id, ctx, RUNTIME_ADMIN, rl.RUNTIME_LIST)
        return self.runtimes.page(p)

    async def reconcile(self, p: rl.RuntimeReconcileParams, ctx: RequestContext) -> rl.Reconciled:
        self.caller(p.run_id, ctx, RUNTIME_ADMIN, None)
        stale = self.runtimes.mark_stale(p.stale_after_seconds)
        return rl.Reconciled(stale_runtimes=stale, stale_count=len(stale))

    async def claim(self, p: rl.RunClaimParams, ctx: RequestContext) -> AgentRun:
        self.caller(p.run_id, ctx, RUNTIME_ADMIN, rl.RUN_CLAIM)
        raise NotFoundError("No queued run available", details={"runtime_id": p.runtime_id})

    def lease(self, spec: ActionSpec[rl.RunLeaseParams, AgentRun]) -> Any:
        """``run_renew_claim`` / ``run_release_claim``: the run must hold a claim."""

        async def handle(p: rl.RunLeaseParams, ctx: RequestContext) -> AgentRun:
            self.caller(p.run_id, ctx, RUNTIME_ADMIN, spec)
            target = p.target_run_id or p.run_id or ""
            self.services.registry.require(target)  # an unknown run is not_found
            raise NotFoundError(
                f"Run {target} holds no claim of runtime {p.runtime_id}",
                details={"run_id": target, "runtime_id": p.runtime_id},
            )

        return handle

    async def runner_list(self, p: rl.RunnerListParams, ctx: RequestContext) -> rl.RunnerItems:
        self.caller(p.run_id, ctx, AGENT_RUN_ADMIN, None)
        items = await self.runners(p.include_plugins) if self.runners is not None else []
        return rl.RunnerItems(items=items)

    def _window(self, start: int | None, end: int | None) -> list[RunSession]:
        now = self.services.registry.clock()
        low = start if start is not None else now - 3600
        high = end if end is not None else now
        return [s for s in self.services.registry if low <= s.created_at <= high]

    async def run_stats(self, p: rl.RunStatsParams, ctx: RequestContext) -> RunStats:
        self.caller(p.run_id, ctx, AGENT_RUN_ADMIN, None)
        runs = [
            s
            for s in self._window(p.start_time, p.end_time)
            if p.runner_id is None or s.runner_id == p.runner_id
        ]
        return RunStats.model_validate(_run_counts(runs, p.start_time, p.end_time))

    async def runtime_stats(self, p: RunScopedParams, ctx: RequestContext) -> RuntimeStats:
        self.caller(p.run_id, ctx, AGENT_RUN_ADMIN, None)
        return self.runtimes.stats(len(self.services.registry.active()))

    async def runner_stats(self, p: rl.RunnerStatsParams, ctx: RequestContext) -> RunnerStatsPage:
        self.caller(p.run_id, ctx, AGENT_RUN_ADMIN, None)
        by_runner: dict[str, list[RunSession]] = {}
        for session in self._window(p.start_time, p.end_time):
            by_runner.setdefault(session.runner_id, []).append(session)
        items = [
            {
                "runner_id": runner_id,
                "plugin_identity": runs[0].plugin_identity,
                "total_runs": len(runs),
                "active_runs": sum(not s.finished for s in runs),
                "completed_runs": sum(s.status == "completed" for s in runs),
                "failed_runs": sum(s.status == "failed" for s in runs),
                "success_rate": _rate(runs, "completed"),
                "avg_duration_seconds": _mean(_durations(runs)),
            }
            for runner_id, runs in sorted(by_runner.items())
        ]
        limit = max(1, min(p.limit, MAX_PAGE))
        return RunnerStatsPage.model_validate(
            {"items": items[:limit], "total_count": len(items), "has_more": len(items) > limit}
        )


def _durations(runs: list[RunSession]) -> list[float]:
    return [s.finished_at - s.created_at for s in runs if s.finished_at is not None]


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def _rate(runs: list[RunSession], status: str) -> float | None:
    ended = [s for s in runs if s.status in TERMINAL_STATUSES]
    return sum(s.status == status for s in ended) / len(ended) if ended else None


def _percentile(values: list[float], share: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def _run_counts(runs: list[RunSession], start: int | None, end: int | None) -> dict[str, Any]:
    durations = _durations(runs)
    counts = {
        f"{status}_count": sum(s.status == status for s in runs)
        for status in ("running", "completed", "failed", "cancelled", "timeout")
    }
    return {
        "start_time": start,
        "end_time": end,
        "total_count": len(runs),
        **counts,
        "success_rate": _rate(runs, "completed"),
        "failure_rate": _rate(runs, "failed"),
        "avg_duration_seconds": _mean(durations),
        "p50_duration_seconds": _percentile(durations, 0.5),
        "p95_duration_seconds": _percentile(durations, 0.95),
        "p99_duration_seconds": _percentile(durations, 0.99),
    }


def register_admin_actions(
    table: ActionTable,
    services: RunServices,
    runtimes: RuntimeRegistry,
    runners: ListRunners | None = None,
) -> None:
    admin = _Admin(services, runtimes, runners)
    table.add(rl.RUNTIME_REGISTER, admin.register)
    table.add(rl.RUNTIME_HEARTBEAT, admin.heartbeat)
    table.add(rl.RUNTIME_LIST, admin.runtime_list)
    table.add(rl.RUNTIME_RECONCILE, admin.reconcile)
    table.add(rl.RUN_CLAIM, admin.claim)
    table.add(rl.RUN_RENEW_CLAIM, admin.lease(rl.RUN_RENEW_CLAIM))
    table.add(rl.RUN_RELEASE_CLAIM, admin.lease(rl.RUN_RELEASE_CLAIM))
    table.add(rl.RUNNER_LIST, admin.runner_list)
    table.add(rl.RUN_STATS, admin.run_stats)
    table.add(rl.RUNTIME_STATS, admin.runtime_stats)
    table.add(rl.RUNNER_STATS, admin.runner_stats)
