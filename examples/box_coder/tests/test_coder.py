"""The runner's tool loop against a real Box: ``lbp box`` with the nsjail backend,
started by ``langbot_plugin.testing.box.BoxSandbox``."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.testing import HarnessError, PluginHarness, ScriptedLLM, tool_call
from langbot_plugin.testing.box import BoxSandbox

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio

COMMAND = "python3 -c 'print(6 * 7)' > /workspace/answer.txt; cat /workspace/answer.txt"


def model(messages: list[dict[str, Any]]) -> Any:
    """Asks for one command, then reports what the sandbox printed."""
    last = messages[-1]
    if last["role"] != "tool":
        return tool_call("exec", {"command": COMMAND})
    result = json.loads(last["content"])
    return f"The sandbox printed {result['stdout'].strip()} (exit {result['exit_code']})."


@pytest.fixture
async def box() -> Any:
    try:
        async with BoxSandbox.start("nsjail") as sandbox:
            yield sandbox
    except HarnessError as exc:
        if os.environ.get("LBP_REQUIRE_NSJAIL") == "1":  # CI must not skip
            raise
        pytest.skip(str(exc))


async def test_the_model_runs_code_in_the_box(box: BoxSandbox) -> None:
    async with PluginHarness(PLUGIN, llm=ScriptedLLM(model), tools=box.tools()) as h:
        reply = await h.run_agent("what is six times seven?")
    assert reply.ok, reply.error
    assert reply.text == "The sandbox printed 42 (exit 0)."
    assert reply.types == ["tool.call.started", "tool.call.completed", "run.completed"]
    ((parameters, answer),) = box.executed
    assert parameters == {"command": COMMAND}
    assert (answer["backend"], answer["stdout"]) == ("nsjail", "42\n")
    listing = await box.exec({"command": "cat /workspace/answer.txt"})
    assert listing["stdout"] == "42\n"  # the Box session outlives the run


async def test_a_model_that_never_answers_is_stopped(box: BoxSandbox) -> None:
    endless = ScriptedLLM([tool_call("exec", {"command": "true"})])
    async with PluginHarness(PLUGIN, llm=endless, tools=box.tools()) as h:
        reply = await h.run_agent("loop", config={"max_steps": 2})
    assert reply.error is not None
    assert reply.error["code"] == "coder.too_many_steps"
    assert len(box.executed) == 3


async def test_without_the_box_the_run_says_so() -> None:
    async with PluginHarness(PLUGIN) as h:
        reply = await h.run_agent("hi")
    assert reply.error is not None
    assert reply.error["code"] == "coder.no_box"
