"""One invocation of a runner: its context bound, its results as they happen.

:func:`invoke_runner` is what ``AgentRunner.invoke(ctx)`` returns (the worker drives
it; a plugin's own unit test may too). It builds the run's API
(:class:`~langbot_plugin.api.proxies.agent_run.tracing.TracedRunAPI` over
``runner.get_run_api(ctx)``, an override included), binds ``ctx`` to it (``ctx.api``,
``ctx.reply``, ``ctx.log`` ...) and runs ``run(ctx)`` with the invocation bound
task-locally (:mod:`langbot_plugin.api.proxies.invocation`):

* an async generator: each result it yields (of this run: a result naming another
  run's ``run_id`` is refused with :class:`ValueError`) comes out in order with what
  the context produced (logs, tool-call traces); a terminal result (``run.completed``
  or ``run.failed``) ends the run and closes the generator;
* a coroutine (the event-handler style): it must return ``None``;
* either way, a run that ends without a terminal result gets ``run.completed``, as in
  the reference.

The results come out **as they happen**: ``run(ctx)`` runs in a task of its own, its
results wait in a bounded buffer (:data:`RESULT_BUFFER`; a producer waits when it is
full, nothing is dropped), and a ``ctx.log`` line is yielded while the coroutine is
still running. A generator runner still goes one result at a time: after each result
it yields it waits until the consumer asks for the next (so the worker reports a
step's refusals before the runner acts again). Closing the stream (``aclose``, or
the worker cancelling the run) cancels that task and waits for it. A failure comes
out after the results produced before it.

The task is owned by the generator, not by an anyio task group: an async generator
cannot keep a cancel scope open across its yields (its consumer's scopes, the
worker's per-step deadline among them, would interleave with it). It is created on
the first step, and cancelled and awaited when the stream ends, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, cast

from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.result import (
    AgentRunResult,
    AgentRunResultType,
)
from langbot_plugin.api.proxies.agent_run.tracing import TracedRunAPI
from langbot_plugin.api.proxies.invocation import bind_invocation, current_binding
from langbot_plugin.rpc.errors import NotReadyError

if TYPE_CHECKING:
    from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner

__all__ = ["RESULT_BUFFER", "TERMINAL_RESULTS", "invoke_runner"]

#: How many results may wait for the consumer before the runner waits.
RESULT_BUFFER = 256
#: The result types that end a run.
TERMINAL_RESULTS = frozenset({"run.completed", "run.failed"})


class _Unconnected:
    """``ctx.api`` of a runner no runtime connected (a unit test calling ``invoke``
    without overriding ``get_run_api``): each call says so; ``ctx.log`` still works."""

    def __getattr__(self, name: str) -> Any:
        raise NotReadyError(f"ctx.api.{name}: this runner is not connected to a runtime")


def _run_api(runner: AgentRunner, ctx: AgentRunContext, handler: Any) -> Any:
    from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner

    overridden = (
        "get_run_api" in vars(runner) or type(runner).get_run_api is not AgentRunner.get_run_api
    )
    if handler is None and not overridden:
        return None
    return runner.get_run_api(ctx)


def _field(result: object, name: str) -> object:
    """A result's ``run_id`` or ``type`` (its string), whether a model or a dict."""
    if isinstance(result, AgentRunResult):
        value = getattr(result, name)
    else:
        value = cast(dict[str, Any], result).get(name) if isinstance(result, dict) else None
    return value.value if isinstance(value, AgentRunResultType) else value


class _Turns:
    """Keeps a generator runner from running ahead (the module docstring says why)."""

    def __init__(self) -> None:
        self.waiting = False
        self._go = asyncio.Event()

    async def wait(self) -> None:
        self.waiting = True
        try:
            await self._go.wait()
        finally:
            self._go.clear()
            self.waiting = False

    def ask(self) -> None:
        if self.waiting:
            self._go.set()


async def _execute(runner: AgentRunner, ctx: AgentRunContext, put: Any, turns: _Turns) -> None:
    """Run ``run(ctx)`` and put its results; ``run.completed`` if it ends without one."""
    terminal = False
    execution = runner.run(ctx)
    if inspect.isasyncgen(execution):
        async with contextlib.aclosing(cast(AsyncGenerator[Any], execution)) as results:
            async for result in results:
                run_id = _field(result, "run_id")
                if run_id and run_id != ctx.run_id:
                    raise ValueError(
                        f"Runner result belongs to a different invocation (run {run_id!r}, "
                        f"this run is {ctx.run_id!r})"
                    )
                await put(result)
                if _field(result, "type") in TERMINAL_RESULTS:
                    terminal = True
                    break
                await turns.wait()
    elif inspect.isawaitable(execution):
        if await execution is not None:
            raise TypeError("a coroutine Runner.run must return None; yield results")
    else:
        raise TypeError("Runner.run must be an async generator or a coroutine function")
    if not terminal:
        await put(AgentRunResult.run_completed(ctx.run_id))


async def invoke_runner(runner: AgentRunner, ctx: AgentRunContext) -> AsyncGenerator[Any]:
    """See the module docstring."""
    handler = runner._handler()  # pyright: ignore[reportPrivateUsage]
    buffer: asyncio.Queue[Any] = asyncio.Queue(maxsize=RESULT_BUFFER)
    raw_api = _run_api(runner, ctx, handler)
    api: Any = _Unconnected() if raw_api is None else TracedRunAPI(raw_api, buffer.put, ctx.run_id)
    installation = current_binding(handler)
    config = runner.get_plugin_config()

    turns = _Turns()

    async def bound() -> None:
        with bind_invocation(handler, api, config=config, binding=installation):
            await _execute(runner, ctx, buffer.put, turns)

    with ctx.activate(api, buffer.put):
        task = asyncio.get_running_loop().create_task(bound())
        try:
            while (item := await _next(buffer, task, turns)) is not None:
                yield item
            await task  # its failure, after what it produced
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task


async def _next(buffer: asyncio.Queue[Any], task: asyncio.Task[None], turns: _Turns) -> Any:
    """The next result of the run, or ``None`` once its task has ended and every
    result it produced has been taken."""
    while True:
        try:
            return buffer.get_nowait()
        except asyncio.QueueEmpty:
            if task.done():
                return None
        turns.ask()  # all taken: a generator runner waiting for its turn goes on
        getter = asyncio.ensure_future(buffer.get())
        try:
            await asyncio.wait((getter, task), return_when=asyncio.FIRST_COMPLETED)
        finally:
            if not getter.done():
                getter.cancel()  # nothing is lost: the item stays in the buffer
        if getter.done() and not getter.cancelled():
            return getter.result()
