"""The runner's tool loop against a real Box: ``lbp box`` with the nsjail backend,
started by ``langbot_plugin.testing.box.BoxSandbox``; the runs are bound to its session,
so the files the code wrote can be exported and delivered."""

import json
import os
from pathlib import Path
from typing import Any

import pytest

from langbot_plugin.testing import AgentReply, HarnessError, PluginHarness, ScriptedLLM, tool_call
from langbot_plugin.testing.box import BoxSandbox

PLUGIN = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.anyio

COMMAND = "python3 -c 'print(6 * 7)' > /workspace/answer.txt; cat /workspace/answer.txt"
TABLE = "python3 -c 'for n in range(1, 4): print(n, n * n, sep=\",\")' > /workspace/squares.csv"


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
    async with PluginHarness(PLUGIN, llm=ScriptedLLM(model), box=box) as h:
        reply = await h.run_agent("what is six times seven?")
    assert reply.ok, reply.error
    assert reply.text == "The sandbox printed 42 (exit 0)."
    assert reply.types == [
        "tool.call.started",
        "tool.call.completed",
        "message.completed",
        "run.completed",
    ]
    assert reply.deliveries == []  # nothing exported, nothing sent
    ((parameters, answer),) = box.executed
    assert parameters == {"command": COMMAND}
    assert (answer["backend"], answer["stdout"]) == ("nsjail", "42\n")
    listing = await box.exec({"command": "cat /workspace/answer.txt"})
    assert listing["stdout"] == "42\n"  # the Box session outlives the run


async def table_run(box: BoxSandbox, path: str) -> AgentReply:
    """A model that writes a table in the sandbox, asks to deliver ``path``, then answers
    with what the delivery told it."""

    def model(messages: list[dict[str, Any]]) -> Any:
        results = [json.loads(m["content"]) for m in messages if m["role"] == "tool"]
        if not results:
            return tool_call("exec", {"command": TABLE})
        if len(results) == 1:
            return tool_call("deliver_file", {"path": path})
        return f"delivery: {json.dumps(results[-1])}"

    async with PluginHarness(PLUGIN, llm=ScriptedLLM(model), box=box) as h:
        reply = await h.run_agent("a table of squares, as a file please")
    assert reply.ok, reply.error
    return reply


async def test_a_file_the_code_wrote_is_exported_and_delivered(box: BoxSandbox) -> None:
    reply = await table_run(box, "/workspace/squares.csv")
    assert reply.text == 'delivery: {"delivered_with_answer": ["squares.csv"]}'
    (delivery,) = reply.deliveries
    (sent,) = delivery.files
    assert (delivery.via, sent.name, sent.data) == ("message", "squares.csv", b"1,1\n2,4\n3,9\n")
    (completed,) = reply.of_type("message.completed")
    assert completed.data["file_ids"] == [sent.id]
    listing = await box.exec({"command": "ls /workspace"})
    assert "squares.csv" not in listing["stdout"]  # moved out of the Box once accepted


async def test_a_refused_export_reaches_the_model(box: BoxSandbox) -> None:
    reply = await table_run(box, "/workspace/missing.csv")
    assert reply.text.startswith('delivery: {"error": "box.export.refused"'), reply.text
    assert reply.deliveries == []
    listing = await box.exec({"command": "cat /workspace/squares.csv"})
    assert listing["stdout"] == "1,1\n2,4\n3,9\n"  # a refused batch keeps the Box as it was


async def test_a_model_that_never_answers_is_stopped(box: BoxSandbox) -> None:
    endless = ScriptedLLM([tool_call("exec", {"command": "true"})])
    async with PluginHarness(PLUGIN, llm=endless, box=box) as h:
        reply = await h.run_agent("loop", config={"max_steps": 2})
    assert reply.error is not None
    assert reply.error["code"] == "coder.too_many_steps"
    assert len(box.executed) == 3


async def test_without_the_box_the_run_says_so() -> None:
    async with PluginHarness(PLUGIN) as h:
        reply = await h.run_agent("hi")
    assert reply.error is not None
    assert reply.error["code"] == "coder.no_box"
