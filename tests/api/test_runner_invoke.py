"""``AgentRunner.invoke``: the context bound for the run, generator and coroutine runners,
the context's own results in order and as they happen, the final ``run.completed``,
closing the stream, an overridden ``get_run_api``, a result of another run, and the 0.7
``Runner``'s typed event callbacks."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import anyio
import pytest

from langbot_plugin.api.definition.components import AgentRunner, Runner
from langbot_plugin.api.definition.components.agent_runner.invoke import RESULT_BUFFER
from langbot_plugin.api.entities.builtin.platform.events import EBAEvent, MessageReceivedEvent
from langbot_plugin.api.entities.builtin.provider.message import MessageChunk
from langbot_plugin.api.entities.builtin.runner import RunnerContext, RunnerResult
from langbot_plugin.api.proxies.invocation import current_config
from langbot_plugin.rpc.errors import NotReadyError
from tests.api.helpers import HostPeer, connected
from tests.api.runs import run_context

pytestmark = pytest.mark.anyio


class Logs(AgentRunner):
    def __init__(self, lines: int, value: Any = None) -> None:
        super().__init__()
        self.lines, self.value = lines, value
        self.seen_config: Any = None

    async def run(self, ctx: RunnerContext) -> Any:
        self.seen_config = current_config(self._plugin_runtime_handler)
        for i in range(self.lines):
            await ctx.log(f"line {i}")
        return self.value


class Streams(AgentRunner):
    async def run(self, ctx: RunnerContext) -> AsyncGenerator[RunnerResult]:
        await ctx.log("before")
        yield RunnerResult.message_delta(ctx.run_id, MessageChunk(role="assistant", content="a"))
        await ctx.log("after")


async def _outcome(runner: AgentRunner, ctx: RunnerContext) -> tuple[list[Any], Exception | None]:
    """What the invocation yielded, and what it raised (caught inside the connection, so
    it is not wrapped in the connection's task group)."""
    items: list[Any] = []
    error: Exception | None = None
    async with connected(HostPeer()) as channel:
        runner.bind_runtime(plugin_runtime_handler=channel, plugin_config={"k": 1})
        try:
            async for item in runner.invoke(ctx):
                items.append(item)
        except Exception as exc:
            error = exc
    return items, error


async def _invoke(runner: AgentRunner, ctx: RunnerContext) -> list[Any]:
    items, error = await _outcome(runner, ctx)
    assert error is None, error
    return items


async def test_a_coroutine_runner_logs_and_sees_the_invocation() -> None:
    runner = Logs(2)
    ctx = run_context()
    items = await _invoke(runner, ctx)
    assert [(i.type, i.data.get("text")) for i in items] == [
        ("processor.log", "line 0"),
        ("processor.log", "line 1"),
        ("run.completed", None),  # as the reference's invoke() ends a run
    ]
    assert runner.seen_config == {"k": 1}
    assert not ctx.active  # unbound again after the run


async def test_results_come_out_in_the_order_they_happened() -> None:
    items = await _invoke(Streams(), run_context())
    assert [(i.type, i.data.get("text")) for i in items] == [
        ("processor.log", "before"),
        ("message.delta", None),
        ("processor.log", "after"),
        ("run.completed", None),
    ]


async def test_a_coroutine_must_return_none() -> None:
    _, error = await _outcome(Logs(0, value="oops"), run_context())
    assert isinstance(error, TypeError)
    assert "must return None" in str(error)


async def test_more_results_than_the_buffer_holds_drain_in_order() -> None:
    got = await _invoke(Logs(RESULT_BUFFER * 2 + 1), run_context())
    assert [i.data["text"] for i in got[:-1]] == [
        f"line {n}" for n in range(RESULT_BUFFER * 2 + 1)
    ]  # the runner waited for room; nothing was dropped
    assert got[-1].type == "run.completed"


class Waits(AgentRunner):
    """Logs, then waits for the test before going on."""

    def __init__(self) -> None:
        super().__init__()
        self.go_on = anyio.Event()
        self.stopped = anyio.Event()

    async def run(self, ctx: RunnerContext) -> None:
        try:
            await ctx.log("started")
            await self.go_on.wait()
            await ctx.log("went on")
        finally:
            self.stopped.set()


async def test_a_coroutine_runners_logs_come_out_while_it_runs() -> None:
    runner = Waits()
    stream = runner.invoke(run_context())
    with anyio.fail_after(30):  # a bound, not a timing: without streaming this hangs
        first = await anext(stream)  # the runner is still waiting for go_on
        assert (first.type, first.data["text"]) == ("processor.log", "started")
        assert not runner.stopped.is_set()
        runner.go_on.set()
        rest = [item.type async for item in stream]
    assert rest == ["processor.log", "run.completed"]


async def test_closing_the_stream_cancels_a_running_coroutine_runner() -> None:
    runner = Waits()
    stream = runner.invoke(run_context())
    with anyio.fail_after(30):
        assert (await anext(stream)).type == "processor.log"
        await stream.aclose()
    assert runner.stopped.is_set()  # cancelled inside its wait, its cleanup ran
    assert not runner.go_on.is_set()


class FakeRunAPI:
    """A run API of a plugin author's test (no runtime)."""

    run_id = "run-1"

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []

    async def call_tool(self, tool_name: str, parameters: dict[str, Any]) -> Any:
        self.calls.append((tool_name, parameters))
        return {"ok": True}


async def test_an_overridden_get_run_api_is_used_without_a_runtime() -> None:
    api = FakeRunAPI()

    class Replies(AgentRunner):
        def get_run_api(self, ctx: RunnerContext) -> Any:
            return api

        async def run(self, ctx: RunnerContext) -> None:
            await ctx.api.call_tool("event_reply", {"text": "hi"})

    items = [item.type async for item in Replies().invoke(run_context())]
    assert api.calls == [("event_reply", {"text": "hi"})]
    assert items == ["tool.call.started", "tool.call.completed", "run.completed"]


async def test_a_result_of_another_run_is_refused_and_the_context_released() -> None:
    class Other(AgentRunner):
        async def run(self, ctx: RunnerContext) -> AsyncGenerator[RunnerResult]:
            yield RunnerResult.run_completed("another-run")

    ctx = run_context()
    with pytest.raises(ValueError, match="different invocation"):
        await anext(Other().invoke(ctx))
    with pytest.raises(RuntimeError, match="not active") as raised:
        _ = ctx.api
    assert isinstance(raised.value, NotReadyError)  # our code, the reference's class


async def test_a_terminal_result_ends_the_run_and_closes_the_generator() -> None:
    class Ends(AgentRunner):
        async def run(self, ctx: RunnerContext) -> AsyncGenerator[RunnerResult]:
            yield RunnerResult.run_completed(ctx.run_id)
            raise AssertionError("execution must stop at the terminal result")

    items = [item.type async for item in Ends().invoke(run_context())]
    assert items == ["run.completed"]


async def test_the_07_runner_dispatches_typed_event_callbacks() -> None:
    seen: list[str] = []

    class Greeter(Runner):
        async def initialize(self) -> None:
            @self.handler(MessageReceivedEvent)
            async def on_message(ctx: RunnerContext) -> None:
                seen.append(type(ctx.platform_event).__name__)
                await ctx.log("greeted")

    runner = Greeter()
    await runner.initialize()
    raw = run_context().model_dump()
    raw["event"]["data"] = {"type": "message.received", "bot_uuid": "b", "message_chain": []}
    items = await _invoke(runner, RunnerContext.model_validate(raw))
    assert seen == ["MessageReceivedEvent"]
    assert [i.type for i in items] == ["processor.log", "run.completed"]
    with pytest.raises(TypeError, match="platform event class"):
        runner.handler(dict)  # type: ignore[arg-type]
    other = Greeter()  # no callbacks registered: a clear error, not a silent success
    _, error = await _outcome(other, RunnerContext.model_validate(raw))
    assert isinstance(error, ValueError)
    assert "No handler registered" in str(error)  # the reference's words
    assert issubclass(MessageReceivedEvent, EBAEvent)
    # a chat message's run (what lbp dev and the harness send) carries no platform event
    _, error = await _outcome(runner, run_context())
    assert isinstance(error, ValueError)
    assert str(error).startswith("this run's event (message.received) is not an event-based")
    assert str(error).endswith("override run(ctx) to answer chat messages")
    assert seen == ["MessageReceivedEvent"]


async def test_a_generator_runner_does_not_run_ahead_of_its_consumer() -> None:
    # the worker reports a step's refusals after each result, before the runner acts again
    progress: list[str] = []

    class Steps(AgentRunner):
        async def run(self, ctx: RunnerContext) -> AsyncGenerator[RunnerResult]:
            progress.append("first step")
            yield RunnerResult.message_delta(
                ctx.run_id, MessageChunk(role="assistant", content="a")
            )
            progress.append("second step")
            yield RunnerResult.run_completed(ctx.run_id)

    stream = Steps().invoke(run_context())
    assert (await anext(stream)).type == "message.delta"
    await anyio.wait_all_tasks_blocked()  # the runner had every chance to go on
    assert progress == ["first step"]
    assert [item.type async for item in stream] == ["run.completed"]
    assert progress == ["first step", "second step"]
