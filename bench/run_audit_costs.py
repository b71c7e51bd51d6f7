"""What the run audit of the runtime's and the SDK's refusals costs, per entry.

``python -m bench.run_audit_costs``: the median of 5 rounds of each step, in
microseconds, in this process (no other implementation has the feature to compare
with). Only refused calls pay for it: an allowed call crosses the same code as before.

* runtime: a refusal kept in the run's record (two redactions), one past the bound
  (counted only), and an allowed authorization for scale;
* SDK: a refusal noted in the run's binding (one redaction);
* the report of 256 refusals to a runtime over an in-memory RPC link (per entry);
* the host: a runtime entry added to its audit (redacted, batched for SQLite).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable

import anyio

from langbot_plugin.api.proxies.run_refusals import RunRefusals
from langbot_plugin.host.audit import AuditLog
from langbot_plugin.host.audit_feed import record_runtime_audit
from langbot_plugin.host.sqlite import HostDatabase
from langbot_plugin.protocol.errors import ResourceNotGrantedError
from langbot_plugin.protocol.run_audit import (
    REPORT_RUN_AUDIT,
    ReportRunAuditParams,
    ReportRunAuditResult,
    RunAuditEntry,
)
from langbot_plugin.protocol.spec import ActionTable
from langbot_plugin.rpc import RequestContext, RPCSession
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.runtime.run_audit import RunAudits
from langbot_plugin.runtime.runs import LiveRun, LiveRuns

ROUNDS = 5
N = 20_000


def per_call(fn: Callable[[], object], n: int = N) -> float:
    rounds: list[float] = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(n):
            fn()
        rounds.append((time.perf_counter() - start) / n * 1e6)
    return statistics.median(rounds)


def runtime_rows() -> dict[str, float]:
    runs = LiveRuns(RunAudits(per_run=10**9, total=10**9))
    context = {"resources": {"models": [{"model_id": "m-a", "operations": ["invoke"]}]}}
    runs.open(LiveRun.from_context("r1", "a/p", context))
    refused = {"llm_model_uuid": "m-b", "run_id": "r1"}
    allowed = {"llm_model_uuid": "m-a", "run_id": "r1"}
    error = ResourceNotGrantedError("model 'm-b' is not granted for invoke in run r1")
    full = RunAudits(per_run=0)
    full.open("r2", "a/p")
    return {
        "runtime: refusal kept": per_call(
            lambda: runs.audit.refused("invoke_llm", refused, "a/p", error)
        ),
        "runtime: refusal past the bound (counted)": per_call(
            lambda: full.refused("invoke_llm", {**refused, "run_id": "r2"}, "a/p", error)
        ),
        "runtime: allowed call, authorized (for scale)": per_call(
            lambda: runs.authorize("invoke_llm", allowed, "a/p")
        ),
    }


def sdk_row() -> dict[str, float]:
    refusals = RunRefusals("r1", None)

    def note() -> None:
        refusals.note(
            "invoke_llm", "m-b", "permission_denied.resource", "model 'm-b' is not granted"
        )
        if len(refusals.pending) >= 200:
            refusals.pending.clear()

    return {"SDK: refusal noted": per_call(note)}


async def report_row() -> dict[str, float]:
    audits = RunAudits(per_run=10**9, total=10**9)
    audits.open("r1", "a/p")
    table = ActionTable()

    async def report(p: ReportRunAuditParams, ctx: RequestContext) -> ReportRunAuditResult:
        return ReportRunAuditResult(accepted=audits.reported(p.run_id, "a/p", p.entries))

    table.add(REPORT_RUN_AUDIT, report)
    runtime_end, worker_end = memory_pair()
    rounds: list[float] = []
    async with (
        RPCSession(runtime_end, table, name="runtime").running(),
        RPCSession(worker_end, None, name="worker").running() as worker,
    ):
        refusals = RunRefusals("r1", worker)
        for _ in range(ROUNDS):
            for _ in range(256):
                refusals.note("invoke_llm", "m-b", "permission_denied.resource", "not granted")
            start = time.perf_counter()
            await refusals.report()
            rounds.append((time.perf_counter() - start) / 256 * 1e6)
    return {"SDK -> runtime: report of 256, per entry": statistics.median(rounds)}


async def host_row() -> dict[str, float]:
    audit = AuditLog(HostDatabase(":memory:"), max_entries_per_run=10**9)
    entry = RunAuditEntry(
        at=1.0,
        origin="runtime",
        action="invoke_llm",
        resource="m-b",
        code="resource_not_granted",
        detail={"error": "model 'm-b' is not granted"},
    )
    value = per_call(lambda: record_runtime_audit(audit, "r1", [entry]), 5000)
    await audit.flush()
    return {"host: runtime entry added to the audit": value}


async def main() -> None:
    rows = {**runtime_rows(), **sdk_row(), **await report_row(), **await host_row()}
    width = max(map(len, rows))
    for name, micros in rows.items():
        print(f"{name:<{width}}  {micros:8.2f} us")


if __name__ == "__main__":
    anyio.run(main)
