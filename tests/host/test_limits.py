"""A run over its host-call rate is refused with ``rate_limited`` (and audited); runner
state, transcripts and audit entries past their retention are swept."""

from __future__ import annotations

import base64
import time

import pytest

from langbot_plugin.host.grants import RunScope
from langbot_plugin.host.limits import DAY, Retention, RunRateLimit, SweepReport
from langbot_plugin.host.run_host import RunHost
from tests.host.peers import code_of, payload, served, start

pytestmark = pytest.mark.anyio


async def test_a_run_over_its_rate_is_refused_and_the_refusal_is_audited() -> None:
    # a bucket that never refills within the test: what counts is the number of calls
    host = RunHost(rate_limit=RunRateLimit(calls_per_sec=1e-9, burst=3))
    run = await start(host, conversation_id="c1")
    other = await start(host, "x", conversation_id="c2")
    async with served(host) as rt:
        for _ in range(3):
            await rt.call("get_prompt", payload(run))
        assert await code_of(rt, "get_prompt", payload(run)) == "rate_limited"
        assert await code_of(rt, "state_get", payload(run, scope="conversation", key="k")) == (
            "rate_limited"
        )
        await rt.call("get_prompt", payload(other))  # each run has its own budget
    calls = [e for e in await host.audit.entries(run.run_id) if e["kind"] == "call"]
    assert [e["code"] for e in calls] == [None, None, None, "rate_limited", "rate_limited"]


async def test_the_refusal_says_when_to_retry() -> None:
    from langbot_plugin.host.limits import RunRateLimitedError, TokenBucket

    now = [100.0]
    bucket = TokenBucket(RunRateLimit(calls_per_sec=2.0, burst=1), clock=lambda: now[0])
    bucket.take("r")
    with pytest.raises(RunRateLimitedError) as info:
        bucket.take("r")
    assert info.value.retryable
    assert info.value.details["retry_after_sec"] == 0.5
    now[0] += 0.5  # the bucket refills with its clock
    bucket.take("r")


async def test_without_a_limit_nothing_is_refused() -> None:
    host = RunHost(rate_limit=None)
    run = await start(host)
    async with served(host) as rt:
        for _ in range(300):
            await rt.call("get_prompt", payload(run))


async def test_a_long_run_writes_its_audit_as_it_goes() -> None:
    """Entries are written once 256 are pending, not kept in memory to the run's end."""
    host = RunHost(rate_limit=RunRateLimit(calls_per_sec=1e6, burst=1000))
    run = await start(host, conversation_id="c1")
    async with served(host) as rt:
        for _ in range(300):
            await rt.call("get_prompt", payload(run))
    written = await host.db.run(
        lambda conn: conn.execute("SELECT COUNT(*) FROM run_audit").fetchone()[0]
    )
    assert written >= 256  # before any flush at the run's end
    assert len(await host.audit.entries(run.run_id)) >= 300


async def _count(host: RunHost, table: str) -> int:
    await host.audit.flush()
    return await host.db.run(
        lambda conn: conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
    )


async def test_records_past_their_retention_are_swept() -> None:
    host = RunHost(retention=Retention(runner_state_sec=10 * DAY, transcript_sec=20 * DAY))
    scope = RunScope(conversation_id="c1")
    key = scope.state_key("conversation", "r1")
    assert key is not None
    await host.state.set(key, "memory.summary", "old", scope="conversation")
    await host.transcript.append(scope, role="user", content="old message")
    run = await start(host, conversation_id="c1")
    host.audit.record(run.run_id, "call", action="get_prompt")
    now = time.time()
    items, entries = await _count(host, "transcript"), await _count(host, "run_audit")
    assert items >= 1
    assert entries >= 1

    assert await host.sweep(now=now) == SweepReport()  # nothing is old yet
    assert await host.sweep(now=now + 11 * DAY) == SweepReport(runner_state=1)
    assert await host.state.get(key, "memory.summary") is None
    assert await _count(host, "conversation_state") == 0
    assert await host.sweep(now=now + 21 * DAY) == SweepReport(transcript=items)
    assert await _count(host, "transcript") == 0
    # audits are kept 30 days by default
    assert await host.sweep(now=now + 31 * DAY) == SweepReport(audit=entries)
    assert await _count(host, "run_audit") == 0


async def test_an_audit_older_than_its_retention_is_swept() -> None:
    host = RunHost(retention=Retention(audit_sec=DAY, runner_state_sec=None, transcript_sec=None))
    run = await start(host)
    host.audit.record(run.run_id, "call", action="get_prompt")
    kept = len(await host.audit.entries(run.run_id))
    assert kept >= 1
    report = await host.sweep(now=time.time() + 2 * DAY)
    assert report == SweepReport(audit=kept)
    assert await host.audit.entries(run.run_id) == []


async def test_an_artifact_past_its_expiry_is_swept() -> None:
    host = RunHost(retention=Retention(audit_sec=None, runner_state_sec=None, transcript_sec=None))
    scope = RunScope(conversation_id="c1")
    content = base64.b64encode(b"notes").decode()
    data = {"artifact_type": "file", "mime_type": "text/plain", "content_base64": content}
    await host.artifacts.create(scope, "run-1", {**data, "artifact_id": "a1", "ttl_seconds": 60})
    now = time.time()
    assert await host.sweep(now=now) == SweepReport()
    assert await host.sweep(now=now + 120) == SweepReport(artifacts=1)
    assert await _count(host, "artifact") == 0
    assert await _count(host, "artifact_blob") == 0
