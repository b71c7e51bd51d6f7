"""What a run's audit gets from the plugin runtime when it ends (``host/audit_feed.py``):
the runtime's and the SDK's refusals with their origin, before ``run.ended``, under the
host's own bound; and nothing breaks when the runtime cannot answer."""

from __future__ import annotations

import pytest

from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.host.run_host import RunHost
from langbot_plugin.protocol.run_audit import RunAudit, RunAuditEntry
from langbot_plugin.rpc.errors import ActionNotFoundError, ConnectionClosedError, RPCError
from tests.host.peers import OWNER, RESOURCES
from tests.host.test_run_host import Stream, message, wire

pytestmark = pytest.mark.anyio


def record(run_id: str, *codes: tuple[str, str], dropped: int = 0) -> RunAudit:
    return RunAudit(
        run_id=run_id,
        known=True,
        entries=[
            RunAuditEntry(at=10.0 + i, origin=origin, action="invoke_llm", resource="m-b", code=c)  # type: ignore[arg-type]
            for i, (origin, c) in enumerate(codes)
        ],
        dropped=dropped,
    )


async def test_the_runtimes_record_joins_the_audit_before_the_end() -> None:
    host = RunHost()
    run = await host.start_run(OWNER, "claude", "hello", resources=RESOURCES)
    asked: list[str] = []

    async def runtime_audit(run_id: str) -> RunAudit:
        asked.append(run_id)
        refusals = (("runtime", "resource_not_granted"), ("sdk", "permission_denied.resource"))
        return record(run_id, *refusals, dropped=3)

    items = Stream(wire(AgentRunResult.run_completed(run.run_id, message("x"))))()
    await host.drive(run, items, runtime_audit=runtime_audit)
    assert asked == [run.run_id]
    entries = await host.audit.entries(run.run_id)
    assert [(e["kind"], e["origin"], e["code"]) for e in entries] == [
        ("run.started", "host", None),
        ("call", "runtime", "resource_not_granted"),
        ("call", "sdk", "permission_denied.resource"),
        ("run.ended", "host", None),
    ]
    assert [e["at"] for e in entries[1:3]] == [10.0, 11.0]  # when they happened
    ended = entries[-1]["detail"]
    assert (ended["runtime_audit"], ended["runtime_dropped_entries"]) == ("pulled", 3)


async def test_the_runtimes_entries_count_against_the_hosts_bound() -> None:
    host = RunHost()
    host.audit.max_entries_per_run = 3
    run = await host.start_run(OWNER, "claude", "hello", resources=RESOURCES)

    async def runtime_audit(run_id: str) -> RunAudit:
        return record(run_id, *[("runtime", "run_not_live")] * 5)

    items = Stream(wire(AgentRunResult.run_completed(run.run_id, message("x"))))()
    await host.drive(run, items, runtime_audit=runtime_audit)
    entries = await host.audit.entries(run.run_id)
    assert [e["kind"] for e in entries] == ["run.started", "call", "call", "run.ended"]
    assert entries[-1]["detail"]["dropped_entries"] == 3


@pytest.mark.parametrize(
    "failure",
    [
        ActionNotFoundError("Action get_run_audit not found"),  # a runtime without it
        ConnectionClosedError("the runtime went away"),
    ],
)
async def test_a_runtime_that_cannot_answer_leaves_the_hosts_audit(failure: RPCError) -> None:
    host = RunHost()
    run = await host.start_run(OWNER, "claude", "hello", resources=RESOURCES)

    async def runtime_audit(run_id: str) -> RunAudit:
        raise failure

    items = Stream(wire(AgentRunResult.run_completed(run.run_id, message("x"))))()
    outcome = await host.drive(run, items, runtime_audit=runtime_audit)
    assert outcome.status == "completed"
    entries = await host.audit.entries(run.run_id)
    assert [e["kind"] for e in entries] == ["run.started", "run.ended"]
    assert entries[-1]["detail"]["runtime_audit"] == "unavailable"


async def test_an_origin_the_host_does_not_know_is_the_runtimes() -> None:
    host = RunHost()
    run = await host.start_run(OWNER, "claude", "hello", resources=RESOURCES)
    host.record_runtime_audit(run.run_id, [{"origin": "host", "code": "x", "at": 1.0}])
    await host.audit.flush()
    [entry] = [e for e in await host.audit.entries(run.run_id) if e["kind"] == "call"]
    assert (entry["origin"], entry["code"]) == ("runtime", "x")
