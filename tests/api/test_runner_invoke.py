"""``AgentRunner.invoke``: the context bound for the run, generator and coroutine runners,
the context's own results in order, the bounded wait of those results, and the 0.7
``Runner``'s typed event callbacks."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from typing import Any

import pytest

from langbot_plugin.api.definition.components import AgentRunner, Runner
from langbot_plugin.api.definition.components.agent_runner.invoke import MAX_PENDING_RESULTS
from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.entities.builtin.platform.events import EBAEvent, MessageReceivedEvent
from langbot_plugin.api.entities.builtin.runner import RunnerContext, RunnerResult
from langbot_plugin.api.proxies.invocation import current_config
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
        yield RunnerResult.message_delta(ctx.run_id, {"role": "assistant", "content": "a"})
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
    assert [(i.type, i.data["text"]) for i in items] == [
        ("processor.log", "line 0"),
        ("processor.log", "line 1"),
    ]
    assert runner.seen_config == {"k": 1}
    assert not ctx.active  # unbound again after the run


async def test_results_come_out_in_the_order_they_happened() -> None:
    items = await _invoke(Streams(), run_context())
    assert [(i.type, i.data.get("text")) for i in items] == [
        ("processor.log", "before"),
        ("message.delta", None),
        ("processor.log", "after"),
    ]


async def test_a_coroutine_must_return_none() -> None:
    _, error = await _outcome(Logs(0, value="oops"), run_context())
    assert isinstance(error, TypeError)
    assert "must return None" in str(error)


async def test_one_step_may_leave_a_bounded_number_of_results_waiting() -> None:
    got, error = await _outcome(Logs(MAX_PENDING_RESULTS + 1), run_context())
    assert isinstance(error, AgentAPIException)
    assert error.code == "result_buffer_full"
    assert len(got) == MAX_PENDING_RESULTS  # what was produced is still reported, in order
    assert got[-1].data["text"] == f"line {MAX_PENDING_RESULTS - 1}"


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
    assert [i.type for i in items] == ["processor.log"]
    with pytest.raises(TypeError, match="platform event class"):
        runner.handler(dict)  # type: ignore[arg-type]
    other = Greeter()  # no callbacks registered: a clear error, not a silent success
    _, error = await _outcome(other, RunnerContext.model_validate(raw))
    assert isinstance(error, ValueError)
    assert "no handler registered" in str(error)
    assert issubclass(MessageReceivedEvent, EBAEvent)
