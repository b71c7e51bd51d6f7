"""Stop, clear and restart as seed 002 defines them, across two runners of one
conversation; and each run's audit (calls, refusals, resume ids, the result, no secret)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.host.paging import PageWindow
from langbot_plugin.host.run_host import RunHost, StartedRun
from tests.host.peers import OWNER, RESOURCES, code_of, payload, served
from tests.host.test_run_host import Stream, delta, message, wire
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio

RUNNERS = ("claude", "codex")


async def two_runs(host: RunHost, text: str = "hello") -> dict[str, StartedRun]:
    """One run of each runner in the same conversation."""
    runs: dict[str, StartedRun] = {}
    for runner in RUNNERS:
        runs[runner] = await host.start_run(OWNER, runner, text, resources=RESOURCES)
    return runs


async def resume_id(host: RunHost, run: StartedRun) -> Any:
    key = run.session.state_key("conversation")
    assert key is not None
    return (await host.state.snapshot(key)).get("external.session_id")


async def keep_resume_ids(host: RunHost, runs: dict[str, StartedRun]) -> None:
    """Each runner keeps its harness's resume id, one through the API, one as a result."""
    async with served(host) as rt:
        value = {"scope": "conversation", "key": "external.session_id", "value": "claude-s1"}
        await rt.call("state_set", payload(runs["claude"], **value))
    codex = runs["codex"]
    items = [
        wire(
            AgentRunResult.state_updated(
                codex.run_id, "external.session_id", "codex-t9", "conversation"
            )
        ),
        wire(AgentRunResult.run_completed(codex.run_id, message("done"))),
    ]
    assert (await host.drive(codex, Stream(*items)())).status == "completed"
    assert await resume_id(host, runs["claude"]) == "claude-s1"
    assert await resume_id(host, codex) == "codex-t9"


async def history(host: RunHost, run: StartedRun) -> list[str]:
    page = await host.transcript.page(run.session.scope, PageWindow.of(limit=100))
    return [item["content"] for item in page["items"]]


async def test_clear_drops_every_runners_resume_ids_and_the_history() -> None:
    host = RunHost()
    runs = await two_runs(host)
    await keep_resume_ids(host, runs)
    actor_key = runs["claude"].session.state_key("actor")
    assert actor_key is not None
    await host.state.set(actor_key, "language", "en", scope="actor")

    dropped = await host.clear_conversation(runs["claude"].session)  # cleared through one runner
    assert dropped == 2
    assert await resume_id(host, runs["claude"]) is None
    assert await resume_id(host, runs["codex"]) is None  # the other runner's too
    assert await history(host, runs["codex"]) == []
    assert await host.state.snapshot(actor_key) == {"language": "en"}  # not conversation state
    # a new run of either runner starts without a resume id
    later = await host.start_run(OWNER, "codex", "again", resources=RESOURCES)
    assert "external.session_id" not in later.context["state"]["conversation"]


async def test_stop_cancels_every_live_run_and_keeps_history_and_state() -> None:
    host = RunHost()
    runs = await two_runs(host)
    await keep_resume_ids(host, runs)
    live = await host.start_run(OWNER, "claude", "long task", resources=RESOURCES)
    other = await host.start_run(OWNER, "codex", "long too", resources=RESOURCES)
    streams = {run.run_id: Stream(delta(run, "working"), hang=True) for run in (live, other)}
    outcomes: dict[str, str] = {}

    async def drive(run: StartedRun) -> None:
        outcomes[run.run_id] = (await host.drive(run, streams[run.run_id]())).status

    with anyio.fail_after(PATIENCE):
        async with anyio.create_task_group() as tg:
            for run in (live, other):
                tg.start_soon(drive, run)
            for stream in streams.values():
                await stream.started.wait()
            stopped = host.stop_conversation(live.session.scope)
            # every live run of the conversation, whichever runner (the first claude run
            # was never driven: still live)
            expected = {live.run_id, other.run_id, runs["claude"].run_id}
            assert {s.run_id for s in stopped} == expected
    assert outcomes == {live.run_id: "cancelled", other.run_id: "cancelled"}
    assert all(stream.closed for stream in streams.values())
    assert await resume_id(host, runs["claude"]) == "claude-s1"
    assert await resume_id(host, runs["codex"]) == "codex-t9"
    assert "long task" in await history(host, live)


async def test_restart_keeps_only_what_is_persisted(tmp_path: Path) -> None:
    path = tmp_path / "host.sqlite3"
    first = RunHost(path)
    runs = await two_runs(first)
    await keep_resume_ids(first, runs)
    first.close()

    second = RunHost(path)
    for runner, expected in (("claude", "claude-s1"), ("codex", "codex-t9")):
        again = await second.start_run(OWNER, runner, "back", resources=RESOURCES)
        assert again.context["state"]["conversation"]["external.session_id"] == expected
    assert all(run.run_id not in second.registry for run in runs.values())  # runs are gone
    async with served(second) as rt:  # and cannot act any more
        state = payload(runs["claude"], scope="conversation", key="external.session_id")
        assert await code_of(rt, "state_get", state) == "run_not_live"
    assert (await second.audit.entries(runs["codex"].run_id))[-1]["kind"] == "run.ended"
    second.close()


async def test_the_audit_lists_every_call_refusal_resume_id_and_the_result() -> None:
    host = RunHost()
    secret = "sk-" + "Zy9" * 8  # a well-known key shape
    marked = "vendor-77aa88bb"  # only the runner's config schema says it is secret
    run = await host.start_run(
        OWNER,
        "claude",
        f"my key is {secret}",
        resources=RESOURCES,
        config={"api-key": marked},
        config_schema=[{"name": "api-key", "type": "secret"}],
    )
    async with served(host) as rt:
        value = {"scope": "conversation", "key": "external.session_id", "value": "claude-s1"}
        await rt.call("state_set", payload(run, **value))
        assert await code_of(rt, "state_get", payload(run, scope=secret, key=marked)) == (
            "invalid_params"
        )
        other = payload(run, conversation_id="someone-elses")
        assert await code_of(rt, "history_page", other) == "resource_not_granted"
        await rt.call("state_get", payload(run, scope="conversation", key="external.session_id"))
    items = [
        wire(AgentRunResult.message_completed(run.run_id, message(f"using {marked}"))),
        wire(AgentRunResult.run_completed(run.run_id)),
    ]
    outcome = await host.drive(run, Stream(*items)())
    assert outcome.status == "completed"

    entries = await host.audit.entries(run.run_id)
    kinds = [e["kind"] for e in entries]
    assert kinds == ["run.started", "session", "call", "call", "call", "call", "run.ended"]
    started = entries[0]["detail"]
    assert started["grants"]["tools"] == {"adder": ["call", "detail"], "peek": ["detail"]}
    calls = [
        (e["action"], e["resource"], e["grant"], e["code"]) for e in entries if e["kind"] == "call"
    ]
    assert calls == [
        ("state_set", "conversation:external.session_id", "api:state", None),
        ("state_get", "[redacted]:[redacted]", None, "invalid_params"),
        ("history_page", None, None, "resource_not_granted"),
        ("state_get", "conversation:external.session_id", "api:state", None),
    ]
    assert all(isinstance(e["duration_ms"], float) for e in entries if e["kind"] == "call")
    assert entries[1]["detail"] == {
        "scope": "conversation",
        "key": "external.session_id",
        "value": "claude-s1",
    }
    ended = entries[-1]["detail"]
    assert (ended["status"], ended["messages"]) == ("completed", 1)

    # paged like the event log, exported as JSON lines
    first = await host.audit.page(run.run_id, limit=3)
    assert [e["kind"] for e in first["items"]] == kinds[:3]
    rest = await host.audit.page(run.run_id, after_cursor=first["next_cursor"], limit=10)
    assert [e["kind"] for e in rest["items"]] == kinds[3:]
    assert rest["has_more"] is False
    exported = await host.audit.export_jsonl(run.run_id)
    assert [json.loads(line)["kind"] for line in exported.splitlines()] == kinds

    # no secret in any sink: audit, ledger, transcript, event log
    page = await host.events.page(run.session.scope, PageWindow.of(limit=10))
    sinks = {
        "audit": exported,
        "ledger": str(run.session.events),
        "transcript": str(await history(host, run)),
        "event log": str(page["items"]),
    }
    for sink, text in sinks.items():
        assert secret not in text, sink
        assert marked not in text, sink
        assert "[redacted]" in text, sink


async def test_the_audit_of_a_run_is_bounded() -> None:
    host = RunHost()
    host.audit.max_entries_per_run = 5
    run = await host.start_run(OWNER, "claude", "hello", resources=RESOURCES)
    async with served(host) as rt:
        for _ in range(10):
            await rt.call("state_get", payload(run, scope="conversation", key="k"))
    await host.drive(run, Stream(wire(AgentRunResult.run_completed(run.run_id, message("x"))))())
    entries = await host.audit.entries(run.run_id)
    assert len(entries) == 6  # five kept, and the end always
    assert entries[-1]["detail"]["dropped_entries"] == 6
