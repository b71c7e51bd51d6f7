"""Running an AgentRunner for one ``run_runner`` call.

The worker is the single place that numbers results (``sequence`` 1, 2, ...). It
enforces the run's ``deadline_at`` around each step of the runner (never across a
yield), closes the runner's generator as soon as the run ends, is cancelled or times
out, and turns every failure into one clear ``run.failed``:

* ``runner.context_invalid``, ``runner.not_found``, ``runner.not_initialized``;
* ``runner.timeout`` (retryable) when the deadline passes;
* ``runner.exception`` when the runner raises; ``runner.invalid_result`` when it
  yields something that is not a result.

A final message is delivered once: if the runner already sent ``message.completed``,
the same message is dropped from a later ``run.completed``. A run that ends without
a terminal result gets a ``run.completed``.

While the runner runs, its context is active (``AgentRunContext.activate``): the
context's own calls (``ctx.export_box_files``, ``ctx.reply_files``, ``ctx.state_get``,
...) are the run API's, and what ``ctx.log`` records joins the result stream before
the runner's next result.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import AsyncGenerator
from typing import TYPE_CHECKING, Any, cast

import anyio
from pydantic import BaseModel, ValidationError

from langbot_plugin.protocol.runners import RUNNER_KINDS, RunResultItem, run_failed
from langbot_plugin.worker.loader import LoadedPlugin

if TYPE_CHECKING:
    from langbot_plugin.api.entities.builtin.agent_runner import AgentRunResult
    from langbot_plugin.api.entities.builtin.agent_runner.context_binding import RunContextAPI

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
    loaded: LoadedPlugin, runner_name: str, context: dict[str, Any]
) -> AsyncGenerator[RunResultItem]:
    """The run's results, numbered, each checked as a result item on its way out."""
    async with contextlib.aclosing(_run(loaded, runner_name, context)) as items:
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
    loaded: LoadedPlugin, runner_name: str, context: dict[str, Any]
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

    logs: list[AgentRunResult] = []

    async def emit(result: AgentRunResult) -> None:
        logs.append(result)

    try:
        # The run API offers what this SDK implements; a 0.7 call it lacks raises AttributeError.
        api = cast("RunContextAPI", runner.get_run_api(ctx))
    except RuntimeError:  # not connected to a runtime (a runner driven on its own)
        api = None
    with ctx.activate(api, emit) if api is not None else contextlib.nullcontext():
        async for item in _drive(runner.run(ctx), run_id, ctx.runtime.deadline_at, logs):
            yield item


async def _drive(
    results: AsyncGenerator[Any],
    run_id: str,
    deadline: float | None,
    logs: list[AgentRunResult] | None = None,
) -> AsyncGenerator[dict[str, Any]]:
    sequence = 0
    completed_message: Any = None
    pending = logs if logs is not None else []
    try:
        while True:
            step_done = False
            result: object = None
            with anyio.move_on_after(max(0.0, _remaining(deadline))):
                try:
                    result = await anext(results)
                except StopAsyncIteration:
                    result = None
                step_done = True
            while pending:  # what ctx.log recorded during the step comes first
                logged = _as_item(pending.pop(0), run_id)
                if logged is not None:
                    sequence += 1
                    logged["sequence"] = sequence
                    yield logged
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
            completed_message = _deliver_final_once(item, completed_message)
            sequence += 1
            item["sequence"] = sequence
            yield item
            if item["type"] in TERMINAL_TYPES:
                return
    except Exception as exc:
        reason = f"{type(exc).__name__}: {exc}"
        yield run_failed(run_id, "runner.exception", reason, sequence=sequence + 1)
        return
    finally:
        with anyio.CancelScope(shield=True), anyio.move_on_after(5):
            await results.aclose()
    yield {
        "run_id": run_id,
        "type": "run.completed",
        "data": {"finish_reason": "stop"},
        "usage": None,
        "sequence": sequence + 1,
        "timestamp": int(time.time()),
    }


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
