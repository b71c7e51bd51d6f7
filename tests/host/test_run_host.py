"""Driving a run's result stream: delivery, ledger, state, transcript, cancel, deadline."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import anyio
import pytest

from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.entities.builtin.provider.message import Message, MessageChunk
from langbot_plugin.host.paging import PageWindow
from langbot_plugin.host.results import NormalizedResult
from langbot_plugin.host.run_context import build_run_context, make_resources
from langbot_plugin.host.run_host import RunHost, StartedRun
from langbot_plugin.host.run_outcome import RunOutcome
from langbot_plugin.rpc.errors import ConnectionClosedError, RPCTimeoutError
from tests.api.helpers import captured
from tests.host.peers import payload, served, start
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio


class Stream:
    """A result stream that records whether it was closed."""

    def __init__(self, *items: dict[str, Any], hang: bool = False, fail: Exception | None = None):
        self.items = items
        self.hang = hang
        self.fail = fail
        self.closed = False
        self.started = anyio.Event()

    async def __call__(self) -> AsyncGenerator[dict[str, Any]]:
        try:
            for item in self.items:
                yield item
            self.started.set()
            if self.fail is not None:
                raise self.fail
            if self.hang:
                await anyio.Event().wait()
        finally:
            self.closed = True


def wire(result: AgentRunResult) -> dict[str, Any]:
    return result.model_dump(mode="json")


def delta(run: StartedRun, text: str) -> dict[str, Any]:
    return wire(
        AgentRunResult.message_delta(run.run_id, MessageChunk(role="assistant", content=text))
    )


def message(text: str) -> Message:
    return Message(role="assistant", content=text)


async def history(host: RunHost, run: StartedRun) -> list[tuple[str, str]]:
    page = await host.transcript.page(run.session.scope, PageWindow.of(direction="forward"))
    return [(item["role"], item["content"]) for item in page["items"]]


async def test_a_run_ends_completed_with_its_message_delivered_once() -> None:
    host = RunHost()
    run = await start(host, "question")
    seen: list[NormalizedResult] = []
    stream = Stream(
        delta(run, "ans"),
        delta(run, "answer"),
        wire(AgentRunResult.message_completed(run.run_id, message("answer"))),
        wire(
            AgentRunResult.run_completed(run.run_id, message("answer"), usage={"total_tokens": 7})
        ),
        wire(AgentRunResult.message_completed(run.run_id, message("after the end"))),
    )
    outcome = await host.drive(run, stream(), on_result=seen.append)
    assert outcome.status == "completed"
    assert outcome.text == "answer"
    assert outcome.messages == ["answer"]
    assert outcome.usage is not None
    assert outcome.usage["total_tokens"] == 7
    assert [r.sequence for r in seen] == [1, 2, 3, 4]
    assert [d.reason for d in outcome.dropped] == ["after_terminal"]
    assert stream.closed
    assert await history(host, run) == [("user", "question"), ("assistant", "answer")]
    session = host.registry.require(run.run_id)
    assert session.status == "completed"
    assert [e["type"] for e in session.events] == [
        "message.delta",
        "message.delta",
        "message.completed",
        "run.completed",
    ]
    assert session.events[-1]["metadata"] == {"duplicate_final_message": True}


class Clock:
    """A clock the test moves: nothing depends on how long the machine takes."""

    def __init__(self, now: float = 1_800_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


async def test_a_terminal_result_does_not_cut_the_runner_short_but_the_deadline_does() -> None:
    clock = Clock()
    host = RunHost(clock=clock)
    run = await start(host, timeout=5)
    clock.now += 6  # the deadline has passed by the time the result arrives
    stream = Stream(wire(AgentRunResult.run_completed(run.run_id, message("done"))), hang=True)
    outcome = await host.drive(run, stream())
    assert outcome.status == "completed"  # the deadline only closed the lingering stream
    assert outcome.messages == ["done"]
    assert stream.closed


async def test_a_cancelled_drive_still_ends_the_run() -> None:
    host = RunHost()
    run = await start(host)
    stream = Stream(hang=True)
    with anyio.CancelScope() as scope:

        async def drive() -> None:
            await host.drive(run, stream())

        async with anyio.create_task_group() as tg:
            tg.start_soon(drive)
            await stream.started.wait()
            scope.cancel()
    assert run.session.status == "cancelled"
    assert stream.closed


async def test_state_updates_are_applied_and_checked() -> None:
    host = RunHost()
    run = await start(host, state_scopes=["conversation"])
    items = [
        wire(
            AgentRunResult.state_updated(run.run_id, "external.session_id", "s-9", "conversation")
        ),
        wire(AgentRunResult.state_updated(run.run_id, "pref", 1, "actor")),
        wire(AgentRunResult.state_updated(run.run_id, "big", "x" * 300_000, "conversation")),
        wire(AgentRunResult.run_completed(run.run_id, finish_reason="no_reply")),  # says nothing
    ]
    outcome = await host.drive(run, Stream(*items)())
    assert outcome.status == "completed"
    metadata = [e["metadata"] for e in run.session.events]
    assert metadata[0] == {}
    assert "not available" in metadata[1]["state_rejected"]
    assert metadata[2]["state_error_code"] == "message_too_large"
    again = await start(host, "next")
    assert again.context["state"]["conversation"]["external.session_id"] == "s-9"


async def test_host_cancel_closes_the_stream_and_ends_the_run_cancelled() -> None:
    host = RunHost()
    run = await start(host)
    stream = Stream(delta(run, "partial"), hang=True)
    outcome: RunOutcome | None = None
    async with anyio.create_task_group() as tg:

        async def stop_when_started() -> None:
            await stream.started.wait()
            host.cancel(run.run_id, "user pressed stop")

        tg.start_soon(stop_when_started)
        with anyio.fail_after(PATIENCE):  # without the host's cancel watcher this would hang
            outcome = await host.drive(run, stream())
    assert outcome is not None
    assert outcome.status == "cancelled"
    assert outcome.error == {"error": "user pressed stop", "code": "cancelled", "retryable": False}
    assert stream.closed
    assert run.session.status == "cancelled"
    assert run.session.events[-1]["type"] == "run.failed"
    # stop keeps history; the partial answer is remembered
    assert await history(host, run) == [("user", "hello"), ("assistant", "partial")]


async def test_run_cancel_from_the_runner_side_stops_the_drive() -> None:
    host = RunHost()
    run = await start(host)
    stream = Stream(hang=True)
    async with served(host) as rt, anyio.create_task_group() as tg:

        async def cancel_over_rpc() -> None:
            await stream.started.wait()
            await rt.call("run_cancel", payload(run, reason="runner gave up"))

        tg.start_soon(cancel_over_rpc)
        outcome = await host.drive(run, stream())
        assert outcome.status == "cancelled"
    assert stream.closed


async def test_the_deadline_ends_a_hung_run_as_timeout() -> None:
    host = RunHost()
    run = await start(host, timeout=0.05)
    stream = Stream(hang=True)
    outcome = await host.drive(run, stream())
    assert outcome.status == "timeout"
    assert outcome.error is not None
    assert outcome.error["code"] == "runner.timeout"
    assert stream.closed


@pytest.mark.parametrize(
    ("error", "code"),
    [
        (RPCTimeoutError("no item"), "runner.timeout"),
        (ConnectionClosedError("gone"), "runner.error"),
    ],
)
async def test_a_broken_stream_fails_the_run(error: Exception, code: str) -> None:
    host = RunHost()
    run = await start(host)
    outcome = await host.drive(run, Stream(fail=error)())
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert outcome.error["code"] == code


async def test_a_stream_without_a_terminal_result_fails_but_keeps_the_answer() -> None:
    host = RunHost()
    run = await start(host)
    outcome = await host.drive(run, Stream(delta(run, "streamed"), delta(run, "streamed all"))())
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert outcome.error["code"] == "runner.no_result"
    assert outcome.text == "streamed all"
    assert await history(host, run) == [("user", "hello"), ("assistant", "streamed all")]


async def test_run_failed_from_the_runner_is_kept() -> None:
    host = RunHost()
    run = await start(host)
    outcome = await host.drive(
        run, Stream(wire(AgentRunResult.run_failed(run.run_id, "boom", retryable=True)))()
    )
    assert outcome.status == "failed"
    assert outcome.error == {"error": "boom", "code": "runner.error", "retryable": True}
    assert run.session.status_reason == "boom"


async def test_clear_drops_history_and_conversation_state_only() -> None:
    host = RunHost()
    run = await start(host)
    scope = run.session.scope
    for name in ("conversation", "actor"):
        key = run.session.state_key(name)
        assert key is not None
        await host.state.set(key, "external.session_id", "s", scope=name)
    await host.clear_conversation(run.session)
    assert await history(host, run) == []
    conversation_key = run.session.state_key("conversation")
    actor_key = run.session.state_key("actor")
    assert conversation_key is not None
    assert actor_key is not None
    assert await host.state.snapshot(conversation_key) == {}
    assert await host.state.snapshot(actor_key) == {"external.session_id": "s"}
    assert scope.conversation_id == "person_local-user"


async def test_state_and_history_survive_a_restart(tmp_path: Any) -> None:
    path = tmp_path / "host.sqlite3"
    first = RunHost(path)
    run = await start(first, "remember me")
    key = run.session.state_key("conversation")
    assert key is not None
    await first.state.set(key, "external.session_id", "resume-1", scope="conversation")
    first.close()

    second = RunHost(path)
    later = await start(second, "do you remember")
    assert later.context["state"]["conversation"]["external.session_id"] == "resume-1"
    assert [c for _r, c in await history(second, later)] == ["remember me", "do you remember"]
    assert later.context["context"]["has_history_before"] is True
    assert run.run_id not in second.registry  # runs do not survive a restart
    second.close()


def test_the_built_context_is_what_the_real_host_sends() -> None:
    wire_context = next(
        record["msg"]["data"]["context"]
        for record in captured()
        if record.get("msg", {}).get("action") == "run_runner"
    )
    built = build_run_context(
        "hi there",
        resources=make_resources(models=["m"], tools={"adder": ["call"]}, plugin_storage=True),
        timeout=60,
        clock=lambda: 1_800_000_000.0,
    )
    assert list(built) == list(wire_context)
    for part in ("conversation", "event", "delivery", "runtime", "context"):
        assert set(built[part]) >= set(wire_context[part]), part
    assert set(built["context"]["available_apis"]) >= set(wire_context["context"]["available_apis"])
    assert built["runtime"]["deadline_at"] == 1_800_000_060.0
    ctx = AgentRunContext.model_validate(built)
    assert ctx.input.to_text() == "hi there"
    assert ctx.resources.models[0].operations == ["count_tokens", "invoke", "rerank", "stream"]
    assert ctx.resources.tools[0].operations == ["call"]
    assert ctx.context.available_apis.state is True
    assert ctx.context.available_apis.run_append_result is False
    no_deadline = build_run_context(timeout=None, available_apis={"state": True})
    assert no_deadline["runtime"]["deadline_at"] is None
    assert no_deadline["context"]["available_apis"]["history_page"] is False
