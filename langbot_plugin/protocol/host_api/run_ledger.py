"""Run-ledger plugin -> host actions, and the reference's admin run API.

The ledger actions (``run_get``, ``run_list``, ``run_events_page``, ``run_cancel``,
``run_append_result``, ``run_finalize``) address another run with ``target_run_id``
(this run's ``run_id`` by default). Sent without ``run_id`` they are admin calls, as are
the queue claims, the runtime registry, the runner list and the statistics
(``AgentRunAdminAPIProxy``): the host serves them to the plugins its configuration
names as admins (``agent_run:admin``, ``runtime:admin``) and refuses every other
plugin; the runtime forwards them with the caller's identity.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

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
from langbot_plugin.protocol.host_api.common import RunScopedParams, to_host
from langbot_plugin.protocol.host_api.run_context import Cursor
from langbot_plugin.protocol.spec import Result

__all__ = [
    "ADMIN_ACTIONS",
    "RUNNER_LIST",
    "RUNNER_STATS",
    "RUNTIME_HEARTBEAT",
    "RUNTIME_LIST",
    "RUNTIME_RECONCILE",
    "RUNTIME_REGISTER",
    "RUNTIME_STATS",
    "RUN_ACTIONS",
    "RUN_APPEND_RESULT",
    "RUN_CANCEL",
    "RUN_CLAIM",
    "RUN_EVENTS_PAGE",
    "RUN_FINALIZE",
    "RUN_GET",
    "RUN_LIST",
    "RUN_RELEASE_CLAIM",
    "RUN_RENEW_CLAIM",
    "RUN_STATS",
    "Reconciled",
    "RunAppendParams",
    "RunCancelParams",
    "RunClaimParams",
    "RunEventsPageParams",
    "RunFinalizeParams",
    "RunLeaseParams",
    "RunListParams",
    "RunStatsParams",
    "RunTargetParams",
    "RunnerItems",
    "RunnerListParams",
    "RunnerStatsParams",
    "RuntimeListParams",
    "RuntimeReconcileParams",
    "RuntimeRegisterParams",
]


class RunTargetParams(RunScopedParams):
    target_run_id: str | None = None


class RunListParams(RunScopedParams):
    conversation_id: str | None = None
    statuses: list[str] | None = None
    before_cursor: Cursor = None
    limit: int = 50


class RunEventsPageParams(RunTargetParams):
    before_cursor: Cursor = None
    after_cursor: Cursor = None
    limit: int = 50
    direction: str = "forward"


class RunCancelParams(RunTargetParams):
    reason: str | None = None
    status_reason: str | None = None


class RunAppendParams(RunTargetParams):
    """``result`` is an ``AgentRunResult`` dump."""

    result: dict[str, Any]


class RunFinalizeParams(RunTargetParams):
    status: str | None = None
    reason: str | None = None
    usage: dict[str, Any] | None = None
    cost: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None


class RunClaimParams(RunScopedParams):
    """Claim the next queued run for a runtime (a lease of ``lease_seconds``)."""

    runtime_id: str
    queue_name: str | None = None
    lease_seconds: int = 60
    runner_ids: list[str] | None = None


class RunLeaseParams(RunTargetParams):
    """Renew (``lease_seconds``) or release (``reason``) the claim a runtime holds."""

    runtime_id: str
    claim_token: str
    lease_seconds: int = 60
    reason: str | None = None


class RuntimeRegisterParams(RunScopedParams):
    runtime_id: str
    status: str = "online"
    display_name: str | None = None
    endpoint: str | None = None
    version: str | None = None
    capabilities: dict[str, Any] | None = None
    labels: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None
    heartbeat_deadline_at: float | None = None


class RuntimeListParams(RunScopedParams):
    statuses: list[str] | None = None
    labels: dict[str, str] | None = None
    cursor: Cursor = None
    limit: int = 50


class RuntimeReconcileParams(RunScopedParams):
    stale_after_seconds: float | None = None


class Reconciled(Result):
    """What a reconcile changed: the runtimes marked stale, the claims released."""

    stale_runtimes: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    released_claims: list[dict[str, Any]] = Field(default_factory=list[dict[str, Any]])
    stale_count: int = 0
    released_claim_count: int = 0


class RunnerListParams(RunScopedParams):
    include_plugins: list[str] | None = None


class RunnerItems(Result):
    items: list[dict[str, Any]]


class RunStatsParams(RunScopedParams):
    start_time: int | None = None
    end_time: int | None = None
    runner_id: str | None = None


class RunnerStatsParams(RunScopedParams):
    start_time: int | None = None
    end_time: int | None = None
    limit: int = 50


RUN_GET = to_host("run_get", RunTargetParams, AgentRun)
RUN_LIST = to_host("run_list", RunListParams, RunPage)
RUN_EVENTS_PAGE = to_host("run_events_page", RunEventsPageParams, RunEventPage)
RUN_CANCEL = to_host("run_cancel", RunCancelParams, AgentRun)
RUN_APPEND_RESULT = to_host("run_append_result", RunAppendParams, AgentRunEvent)
RUN_FINALIZE = to_host("run_finalize", RunFinalizeParams, AgentRun)
#: What a run may ask of the ledger (each behind its own ``available_apis`` flag).
RUN_ACTIONS = (RUN_GET, RUN_LIST, RUN_EVENTS_PAGE, RUN_CANCEL, RUN_APPEND_RESULT, RUN_FINALIZE)


RUN_CLAIM = to_host("run_claim", RunClaimParams, AgentRun)
RUN_RENEW_CLAIM = to_host("run_renew_claim", RunLeaseParams, AgentRun)
RUN_RELEASE_CLAIM = to_host("run_release_claim", RunLeaseParams, AgentRun)
RUNTIME_REGISTER = to_host("runtime_register", RuntimeRegisterParams, AgentRuntime)
RUNTIME_HEARTBEAT = to_host("runtime_heartbeat", RuntimeRegisterParams, AgentRuntime)
RUNTIME_LIST = to_host("runtime_list", RuntimeListParams, RuntimePage)
RUNTIME_RECONCILE = to_host("runtime_reconcile", RuntimeReconcileParams, Reconciled)
RUNNER_LIST = to_host("runner_list", RunnerListParams, RunnerItems)
RUN_STATS = to_host("run_stats", RunStatsParams, RunStats)
RUNTIME_STATS = to_host("runtime_stats", RunScopedParams, RuntimeStats)
RUNNER_STATS = to_host("runner_stats", RunnerStatsParams, RunnerStatsPage)

ADMIN_ACTIONS = (
    RUN_CLAIM,
    RUN_RENEW_CLAIM,
    RUN_RELEASE_CLAIM,
    RUNTIME_REGISTER,
    RUNTIME_HEARTBEAT,
    RUNTIME_LIST,
    RUNTIME_RECONCILE,
    RUNNER_LIST,
    RUN_STATS,
    RUNTIME_STATS,
    RUNNER_STATS,
)
