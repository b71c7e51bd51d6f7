"""Run-ledger plugin -> host actions, and the reference's admin run API.

The run-scoped ledger actions (``run_get``, ``run_list``, ``run_events_page``,
``run_cancel``, ``run_append_result``, ``run_finalize``) address another run with
``target_run_id`` (this run's ``run_id`` by default). The admin actions (queue
claims, the runtime registry, statistics) carry no run scope; this SDK does not send
them (see ``AgentRunAdminAPIProxy``), but the runtime forwards them for plugins that do.
"""

from __future__ import annotations

from typing import Any

from langbot_plugin.api.entities.builtin.agent_runner.run_ledger import (
    AgentRun,
    AgentRunEvent,
    RunEventPage,
    RunPage,
)
from langbot_plugin.protocol.host_api.common import RunScopedParams, to_host
from langbot_plugin.protocol.host_api.run_context import Cursor
from langbot_plugin.protocol.spec import ActionSpec, Params, Result

__all__ = [
    "ADMIN_ACTIONS",
    "RUNNER_LIST",
    "RUNNER_STATS",
    "RUNTIME_HEARTBEAT",
    "RUNTIME_LIST",
    "RUNTIME_RECONCILE",
    "RUNTIME_REGISTER",
    "RUNTIME_STATS",
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
    "RunAppendParams",
    "RunCancelParams",
    "RunEventsPageParams",
    "RunFinalizeParams",
    "RunListParams",
    "RunTargetParams",
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


RUN_GET = to_host("run_get", RunTargetParams, AgentRun)
RUN_LIST = to_host("run_list", RunListParams, RunPage)
RUN_EVENTS_PAGE = to_host("run_events_page", RunEventsPageParams, RunEventPage)
RUN_CANCEL = to_host("run_cancel", RunCancelParams, AgentRun)
RUN_APPEND_RESULT = to_host("run_append_result", RunAppendParams, AgentRunEvent)
RUN_FINALIZE = to_host("run_finalize", RunFinalizeParams, AgentRun)


def _admin(name: str) -> ActionSpec[Params, Result]:
    return to_host(name, Params, Result, doc="admin run API (not sent by this SDK)")


RUN_CLAIM = _admin("run_claim")
RUN_RENEW_CLAIM = _admin("run_renew_claim")
RUN_RELEASE_CLAIM = _admin("run_release_claim")
RUNTIME_REGISTER = _admin("runtime_register")
RUNTIME_HEARTBEAT = _admin("runtime_heartbeat")
RUNTIME_LIST = _admin("runtime_list")
RUNTIME_RECONCILE = _admin("runtime_reconcile")
RUNNER_LIST = _admin("runner_list")
RUN_STATS = _admin("run_stats")
RUNTIME_STATS = _admin("runtime_stats")
RUNNER_STATS = _admin("runner_stats")

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
