"""The SDK-local refusals of a run, kept and reported to the runtime
(``api/proxies/run_refusals.py``) over a real in-memory RPC link: bounded, redacted,
nothing sent when there is nothing to say, and a runtime without the action asked once."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

import pytest

from langbot_plugin.api.proxies.run_refusals import MAX_PENDING, RunRefusals
from langbot_plugin.protocol.run_audit import (
    REPORT_RUN_AUDIT,
    ReportRunAuditParams,
    ReportRunAuditResult,
)
from langbot_plugin.protocol.spec import ActionTable
from langbot_plugin.rpc import RequestContext, Route, RPCSession
from langbot_plugin.rpc.redaction import mark_secret
from langbot_plugin.rpc.transport_memory import memory_pair

pytestmark = pytest.mark.anyio


class Unaware:
    """A runtime that knows no run audit (the reference's): notes what it was asked."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def resolve(self, action: str) -> Route | None:
        self.asked.append(action)
        return None


@asynccontextmanager
async def runtime(
    reports: list[ReportRunAuditParams] | None, unaware: Unaware | None = None
) -> AsyncGenerator[RPCSession]:
    """The worker's end of a link to a runtime that keeps the reports (``None``: a
    runtime that does not know the action)."""
    table: ActionTable | Unaware = ActionTable() if unaware is None else unaware
    if reports is not None and isinstance(table, ActionTable):

        async def report(p: ReportRunAuditParams, ctx: RequestContext) -> ReportRunAuditResult:
            reports.append(p)
            return ReportRunAuditResult(accepted=len(p.entries))

        table.add(REPORT_RUN_AUDIT, report)
    runtime_end, worker_end = memory_pair()
    async with (
        RPCSession(runtime_end, table, name="runtime").running(),
        RPCSession(worker_end, None, name="worker").running() as worker,
    ):
        yield worker


async def test_refusals_are_reported_once_bounded_and_redacted() -> None:
    reports: list[ReportRunAuditParams] = []
    secret = "vk-" + "m1n2b3v4c5x6z7"
    mark_secret(secret)
    async with runtime(reports) as channel:
        refusals = RunRefusals("r1", channel)
        await refusals.report()  # nothing to say: nothing sent
        assert reports == []
        for _ in range(MAX_PENDING + 5):
            refusals.note("invoke_llm", secret, "permission_denied.resource", f"no {secret}")
        await refusals.report()
        await refusals.report()  # already reported: nothing sent again
    [sent] = reports
    assert (sent.run_id, len(sent.entries), sent.dropped) == ("r1", MAX_PENDING, 5)
    entry = sent.entries[0]
    assert (entry.origin, entry.action, entry.code) == (
        "sdk",
        "invoke_llm",
        "permission_denied.resource",
    )
    assert (entry.resource, entry.detail) == ("[redacted]", {"error": "no [redacted]"})


async def test_a_runtime_without_the_action_is_not_asked_again() -> None:
    unaware = Unaware()
    async with runtime(None, unaware) as channel:
        refusals = RunRefusals("r1", channel)
        refusals.note("invoke_llm", "m-b", "permission_denied.resource", "no")
        await refusals.report()  # refused: action_not_found, and nothing raised
        assert refusals.unsupported
        refusals.note("invoke_llm", "m-b", "permission_denied.resource", "no")
        await refusals.report()
        assert (refusals.pending, refusals.dropped) == ([], 0)  # not kept waiting either
    assert unaware.asked == [REPORT_RUN_AUDIT.name]
