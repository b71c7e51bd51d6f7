"""One invocation of a runner: its context bound, its results in order.

:func:`invoke_runner` is what ``AgentRunner.invoke(ctx)`` returns. It builds the run's
API (:class:`~langbot_plugin.api.proxies.agent_run.tracing.TracedRunAPI` over the
granted proxy), binds ``ctx`` to it (``ctx.api``, ``ctx.reply``, ``ctx.log`` ...) and
the invocation task-locally (:mod:`langbot_plugin.api.proxies.invocation`), then runs
``run(ctx)``:

* an async generator: each result it yields comes out after the results the context
  produced during that step (logs, tool-call traces), so the order is what happened;
* a coroutine (the event-handler style): the context's results come out when it
  returns; it must return ``None``.

No task is started: the caller drives the invocation step by step (the worker bounds
each step by the run's deadline). The context's results wait in a bounded buffer;
one step producing more than :data:`MAX_PENDING_RESULTS` of them fails that call with
``result_buffer_full`` rather than dropping any.
"""

from __future__ import annotations

import contextlib
import inspect
from collections import deque
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, cast

from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
from langbot_plugin.api.entities.builtin.agent_runner.errors import AgentAPIException
from langbot_plugin.api.entities.builtin.agent_runner.result import AgentRunResult
from langbot_plugin.api.proxies.agent_run.tracing import TracedRunAPI
from langbot_plugin.api.proxies.invocation import bind_invocation, current_binding
from langbot_plugin.rpc.errors import NotReadyError

if TYPE_CHECKING:
    from langbot_plugin.api.definition.components.agent_runner.runner import AgentRunner

__all__ = ["MAX_PENDING_RESULTS", "invoke_runner"]

#: The most context-produced results (logs, traces) one step may leave waiting.
MAX_PENDING_RESULTS = 1024


class _Pending:
    def __init__(self) -> None:
        self.items: deque[AgentRunResult] = deque()

    async def __call__(self, result: AgentRunResult) -> None:
        if len(self.items) >= MAX_PENDING_RESULTS:
            raise AgentAPIException.of(
                "result_buffer_full",
                f"more than {MAX_PENDING_RESULTS} log and trace results in one step; "
                "yield a result (or log less) so they can be sent",
                details={"limit": MAX_PENDING_RESULTS},
            )
        self.items.append(result)

    def drain(self) -> list[AgentRunResult]:
        drained = list(self.items)
        self.items.clear()
        return drained


class _Unconnected:
    """``ctx.api`` of a runner no runtime connected (a unit test calling ``invoke``):
    each call says so; ``ctx.log`` still works."""

    def __getattr__(self, name: str) -> Any:
        raise NotReadyError(f"ctx.api.{name}: this runner is not connected to a runtime")


async def invoke_runner(runner: AgentRunner, ctx: AgentRunContext) -> AsyncGenerator[Any]:
    """See the module docstring."""
    handler = runner._handler()  # pyright: ignore[reportPrivateUsage]
    pending = _Pending()
    api: Any = _Unconnected() if handler is None else TracedRunAPI(runner.get_run_api(ctx), pending)
    binding = current_binding(handler)
    config = runner.get_plugin_config()
    with (
        ctx.activate(api, pending),
        bind_invocation(handler, api, config=config, binding=binding),
    ):
        try:
            execution = runner.run(ctx)
            if inspect.isasyncgen(execution):
                async with contextlib.aclosing(cast(AsyncGenerator[Any], execution)) as results:
                    async for result in results:
                        for item in pending.drain():
                            yield item
                        yield result
            elif inspect.isawaitable(execution):
                if await execution is not None:
                    raise TypeError("a coroutine Runner.run must return None; yield results")
            else:
                raise TypeError("Runner.run must be an async generator or a coroutine function")
        except Exception:
            for item in pending.drain():  # what happened before the failure is still reported
                yield item
            raise
        for item in pending.drain():
            yield item
