"""The worker's own guarantees for a run: a raising runner and a runner past its
deadline each end in one ``run.failed`` with their code, never a ``run.completed``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from langbot_plugin.worker.runs import run_agent
from tests.api.runs import run_context
from tests.support.loaded import loaded_plugin
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio

FAULTY = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "faulty"


async def run(runner: str, *, deadline_in: float | None = 600.0) -> list[dict[str, Any]]:
    context = run_context(deadline_in=deadline_in).model_dump(mode="json")
    async with loaded_plugin(FAULTY) as loaded:
        # bounded: without the worker's own deadline the stuck runner would never end
        with anyio.fail_after(PATIENCE):
            items = [item.model_dump() async for item in run_agent(loaded, runner, context)]
        component = loaded.find(("AgentRunner",), runner)
        assert component is not None
        items.append({"closed": getattr(component.instance, "closed", None)})
    return items


async def test_a_raising_runner_ends_in_run_failed_runner_exception() -> None:
    *results, _ = await run("raiser")
    assert [r["type"] for r in results] == ["message.delta", "run.failed"]
    failed = results[-1]
    assert failed["data"]["code"] == "runner.exception"
    assert failed["data"]["error"] == "RuntimeError: the model client broke"
    assert [r["sequence"] for r in results] == [1, 2]


async def test_a_runner_past_its_deadline_ends_in_run_failed_runner_timeout() -> None:
    *results, after = await run("stuck", deadline_in=0.2)
    assert [r["type"] for r in results] == ["message.delta", "run.failed"]
    failed = results[-1]
    assert failed["data"]["code"] == "runner.timeout"
    assert failed["data"]["retryable"] is True
    assert after == {"closed": True}  # the runner's generator was closed, not abandoned


WARDEN = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "warden"


async def warden(text: str) -> list[dict[str, Any]]:
    context = run_context().model_dump(mode="json")
    context["input"] = {"text": text, "contents": [{"type": "text", "text": text}]}
    async with loaded_plugin(WARDEN) as loaded:
        with anyio.fail_after(PATIENCE):
            return [i.model_dump() async for i in run_agent(loaded, "reach", context)]


async def test_a_runner_that_says_nothing_ends_in_run_failed_empty_result() -> None:
    [failed] = await warden("silent")
    assert failed["type"] == "run.failed"
    assert failed["data"]["code"] == "empty_result"
    assert failed["sequence"] == 1


async def test_an_explicit_no_reply_completes() -> None:
    [done] = await warden("nothing")
    assert done["type"] == "run.completed"
    assert done["data"]["finish_reason"] == "no_reply"
