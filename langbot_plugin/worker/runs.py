"""Running an AgentRunner (or a 0.7 ``Runner``) for one ``run_runner`` call, through
its :meth:`~langbot_plugin.api.definition.components.AgentRunner.invoke` (the context
bound to the run's API, generator and coroutine runners alike).

The worker is the single place that numbers results (``sequence`` 1, 2, ...) and that
enforces what docs/agent-runner.md promises runner authors: ``deadline_at`` around each
step (never across a yield; ``runner.timeout``), the runner's generator closed as soon
as the run ends, every failure one ``run.failed`` (``runner.context_invalid``,
``runner.not_found``, ``runner.not_initialized``, ``runner.exception`` with the
traceback trimmed to the plugin's frames, :mod:`.author_trace`, in ``details``, or
the code of an API error the runner did not catch (``permission_denied.resource``);
``runner.invalid_result``), no blank message and no blank success (``empty_result``,
:class:`~langbot_plugin.protocol.runners.OutputWatch`), and a final message delivered
once.

While a step of the runner runs, the run is bound to the task
(:mod:`langbot_plugin.api.proxies.run_binding`); the binding is closed when the run
ends, so work the runner left behind can no longer act for it. What the SDK refused
locally during a step is reported to the runtime for the run's audit before the
step's result goes out, and what is left at the end of the run before it ends
(:mod:`langbot_plugin.api.proxies.run_refusals`).

While the runner runs, its context is active (``AgentRunner.invoke`` binds it): the
context's own calls (``ctx.export_box_files``, ``ctx.reply_files``, ``ctx.state_get``,
...) are the run API's, and what ``ctx.log`` records joins the result stream before
the runner's next result.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import AsyncGenerator
from pathlib import Path
from typing import Any

import anyio
from pydantic import BaseModel, ValidationError

from langbot_plugin.api.proxies.run_binding import RunBinding, bound
from langbot_plugin.protocol.runners import (
    EMPTY,
    HOLD,
    RUNNER_KINDS,
    OutputWatch,
    RunResultItem,
    empty_result,
    run_failed,
    secret_config_values,
)
from langbot_plugin.rpc.errors import RPCError
from langbot_plugin.rpc.redaction import mark_secret, redact
from langbot_plugin.worker.author_trace import author_trace
from langbot_plugin.worker.loader import LoadedPlugin

__all__ = ["TERMINAL_TYPES", "run_agent"]

TERMINAL_TYPES = frozenset({"run.completed", "run.failed"})


def _as_item(result: object, run_id: str) -> dict[str, Any] | None:
    if isinstance(result, BaseModel):
        item = result.model_dump(mode="json")
    elif isinstance(result, dict):
        item = dict(result)  # pyright: ignore[reportUnknownArgumentType]
    else:
        return None
    if not isinstance(item.get("type"), str):
        return None
    item.setdefault("data", {})
    item.setdefault("usage", None)
    item.setdefault("timestamp", None)
    item["run_id"] = item.get("run_id") or run_id
    return item


def _remaining(deadline: float | None) -> float:
    return math.inf if deadline is None else deadline - time.time()


async def run_agent(
    loaded: LoadedPlugin, runner_name: str, context: dict[str, Any], channel: object = None
) -> AsyncGenerator[RunResultItem]:
    """The run's results, numbered, each checked as a result item on its way out.

    ``channel`` is the connection the run came on: while a step of the runner runs,
    the run is bound to the task (:mod:`langbot_plugin.api.proxies.run_binding`), so
    plugin-level calls made on that connection belong to the run.
    """
    async with contextlib.aclosing(_run(loaded, runner_name, context, channel)) as items:
        async for item in items:
            try:
                checked = RunResultItem.model_validate(item)
            except ValidationError as exc:
                reason = f"runner yielded a malformed result: {exc.error_count()} error(s)"
                run_id = str(context.get("run_id") or "")
                failed = run_failed(
                    run_id, "runner.invalid_result", reason, sequence=item.get("sequence")
                )
                yield RunResultItem.model_validate(failed)
                return
            yield checked


async def _run(
    loaded: LoadedPlugin, runner_name: str, context: dict[str, Any], channel: object
) -> AsyncGenerator[dict[str, Any]]:
    from langbot_plugin.api.definition.components import AgentRunner
    from langbot_plugin.api.entities.builtin.agent_runner import AgentRunContext

    run_id = str(context.get("run_id") or "")
    try:
        ctx = AgentRunContext.model_validate(context)
    except ValidationError as exc:
        yield run_failed(
            run_id, "runner.context_invalid", f"invalid run context: {exc}", sequence=1
        )
        return
    component = loaded.find(RUNNER_KINDS, runner_name)
    if component is None:
        yield run_failed(run_id, "runner.not_found", f"no runner named {runner_name!r}", sequence=1)
        return
    runner = component.instance
    if not isinstance(runner, AgentRunner):
        yield run_failed(
            run_id, "runner.not_initialized", f"runner {runner_name} is not loaded", sequence=1
        )
        return

    spec = component.manifest.manifest.get("spec")
    schema = spec.get("config") if isinstance(spec, dict) else None
    mark_secret(*secret_config_values(schema, context.get("config")))
    # invoke() makes the run API on its first step, inside the binding: that API refuses
    # once the run has ended.
    binding = RunBinding(run_id, channel, ctx.runtime.deadline_at)
    try:
        async for item in _drive(runner.invoke(ctx), binding, loaded.root):
            yield item
    finally:
        binding.close()


async def _drive(
    results: AsyncGenerator[Any], binding: RunBinding, root: Path
) -> AsyncGenerator[dict[str, Any]]:
    run_id, deadline = binding.run_id, binding.deadline_at
    sequence = 0
    completed_message: Any = None
    output = OutputWatch()
    try:
        while True:
            step_done = False
            result: object = None
            with anyio.move_on_after(max(0.0, _remaining(deadline))):
                try:
                    with bound(binding):  # the runner's code runs in this step only
                        result = await anext(results)
                except StopAsyncIteration:
                    result = None
                step_done = True
            await binding.refusals.report()  # the step's refusals go before its result
            if not step_done:
                yield run_failed(
                    run_id,
                    "runner.timeout",
                    "the runner passed its deadline",
                    retryable=True,
                    sequence=sequence + 1,
                )
                return
            if result is None:
                break
            item = _as_item(result, run_id)
            if item is None:
                reason = f"runner yielded {type(result).__name__}, not an AgentRunResult"
                yield run_failed(run_id, "runner.invalid_result", reason, sequence=sequence + 1)
                return
            _redact_failure(item)
            verdict = output.admit(item["type"], item["data"])
            if verdict == EMPTY:
                yield empty_result(run_id, sequence + 1)
                return
            if verdict == HOLD:  # a blank message: no host sees it (numbered as if absent)
                continue
            completed_message = _deliver_final_once(item, completed_message)
            sequence += 1
            item["sequence"] = sequence
            yield item
            if item["type"] in TERMINAL_TYPES:
                return
    except Exception as exc:
        yield _raised(run_id, exc, root, sequence + 1)
        return
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5), bound(binding):
            await results.aclose()  # its cleanup still acts for the run
            await binding.refusals.report()
    if not output.produced:
        yield empty_result(run_id, sequence + 1)
        return
    yield {
        "run_id": run_id,
        "type": "run.completed",
        "data": {"finish_reason": "stop"},
        "usage": None,
        "sequence": sequence + 1,
        "timestamp": int(time.time()),
    }


def _raised(run_id: str, exc: Exception, root: Path, sequence: int) -> dict[str, Any]:
    """The ``run.failed`` of a runner that raised: ``runner.exception``, or the code and
    ``retryable`` of an API error it let through; its own frames in ``details``."""
    code, retryable = "runner.exception", False
    if isinstance(exc, RPCError):
        code, retryable = exc.code, exc.retryable
    reason = f"{type(exc).__name__}: {exc}"
    failed = run_failed(run_id, code, reason, retryable=retryable, sequence=sequence)
    trace = author_trace(exc, root)
    if trace is not None:  # beside data, which the host validates strictly
        failed["details"] = trace.details()
    return failed


def _redact_failure(item: dict[str, Any]) -> None:
    """A runner's own ``run.failed`` keeps no secret in its error message."""
    data = item["data"]
    if item["type"] == "run.failed" and isinstance(data, dict):
        error = data.get("error")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
        if isinstance(error, str):
            data["error"] = redact(error)


def _deliver_final_once(item: dict[str, Any], completed_message: Any) -> Any:
    """Remember a completed message; drop its repeat from ``run.completed``."""
    data = item["data"] if isinstance(item["data"], dict) else {}
    if item["type"] == "message.completed":
        return data.get("message")
    repeated = data.get("message")
    is_repeat = repeated is not None and (
        repeated == completed_message or _same_text(repeated, completed_message)
    )
    if item["type"] == "run.completed" and completed_message is not None and is_repeat:
        item["data"] = {k: v for k, v in data.items() if k != "message"}
    return completed_message


def _same_text(a: Any, b: Any) -> bool:
    def text(message: Any) -> Any:
        return message.get("content") if isinstance(message, dict) else message

    return a is not None and text(a) == text(b)
