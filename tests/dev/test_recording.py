"""Record and replay: ``lbp dev --record FILE`` keeps a run's whole exchange with the
host, ``lbp dev --replay FILE`` and ``PluginHarness.replay`` run the plugin against it
(every host call answered from the recording) and name the first call or reply that
differs. Real processes: ``lbp dev`` and the plugin's ``lbp run``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langbot_plugin.testing import HarnessError, PluginHarness
from tests.cli.helpers import lbp
from tests.dev.helpers import ADD_SCRIPT, scaffolded, toolbox, write_script

pytestmark = pytest.mark.timeout(180)

LINES = [
    "what is 2 + 40?",
    "!hello bob",
    '/tool add {"a": 1, "b": 2}',
    '/event PersonNormalMessageReceived {"text_message": "stop"}',
]


def record(tmp_path: Path) -> tuple[Path, Path]:
    """The toolbox plugin and a recording of four inputs (a run with a tool call, a
    command, a tool, an event)."""
    plugin = toolbox(tmp_path)
    script = write_script(tmp_path, ADD_SCRIPT)
    recording = tmp_path / "recordings" / "add.jsonl"
    messages = [arg for line in LINES for arg in ("-m", line)]
    done = lbp(
        "dev", "--llm-script", str(script), "--record", str(recording), *messages, cwd=plugin
    )
    assert done.code == 0, done.err
    return plugin, recording


def test_a_recorded_run_replays_and_a_changed_plugin_is_caught(tmp_path: Path) -> None:
    plugin, recording = record(tmp_path)
    entries = [json.loads(line) for line in recording.read_text().splitlines()]
    assert entries[0]["plugin"] == "thirdparty/toolbox"
    assert [e["input"] for e in entries if "input" in e] == LINES
    calls = [e["call"]["action"] for e in entries if "call" in e]
    assert calls == ["get_tool_detail", "invoke_llm_stream", "call_tool", "invoke_llm_stream"]
    assert {e["call"]["data"]["run_id"] for e in entries if "call" in e} == {"run-1"}
    outputs = [e["output"] for e in entries if "output" in e]
    assert outputs[0]["text"] == "The sum is 42, as the add tool says."
    assert [o["kind"] for o in outputs] == [
        "run.ended",
        "command.reply",
        "tool.reply",
        "event.reply",
    ]

    # The replay needs no model: every call is answered from the recording.
    done = lbp("dev", "--replay", str(recording), cwd=plugin)
    assert done.code == 0, done.err
    assert "lbp dev: replayed 4 input(s): 4 host call(s) and every reply as recorded" in done.err

    # The runner now asks the model with a system prompt: caught at its first call to it.
    runner = plugin / "components" / "agent_runner" / "agent.py"
    runner.write_text(
        runner.read_text().replace(
            "messages = [Message(",
            'messages = [Message(role="system", content="Be exact."), Message(',
        )
    )
    done = lbp("dev", "--replay", str(recording), cwd=plugin)
    assert done.code == 1
    failure = done.err.splitlines()[-1]
    assert failure.startswith(
        f"lbp dev: replay of {recording}: call 2 (invoke_llm_stream) differs at "
        'messages[0].content: the recording has "what is 2 + 40?"; this run made '
        '"Be exact."'
    ), failure


@pytest.mark.anyio
async def test_the_harness_replays_a_recording_and_names_the_first_difference(
    tmp_path: Path,
) -> None:
    plugin, recording = record(tmp_path)
    report = await PluginHarness.replay(plugin, recording)
    assert report.ok, report.describe()
    assert (report.inputs, report.calls, report.recorded_calls) == (4, 4, 4)

    tool = plugin / "components" / "tools" / "add.py"
    tool.write_text(
        tool.read_text().replace('params["a"] + params["b"]', 'params["a"] * params["b"]')
    )
    report = await PluginHarness.replay(plugin, recording)
    assert not report.ok
    assert report.difference is None  # the same calls to the host ...
    assert report.describe().startswith("reply 3 differs: the recording has ")  # ... another answer
    assert '"result": {"sum": 2}' in report.describe()

    with pytest.raises(HarnessError, match="is not a recording"):
        await PluginHarness.replay(plugin, plugin / "manifest.yaml")


@pytest.mark.anyio
async def test_a_recording_replays_to_the_runner_it_was_made_with(tmp_path: Path) -> None:
    """A plugin with two runners: the recording names the one the inputs went to, and
    both replays drive that one, not the plugin's first."""
    plugin = scaffolded(tmp_path)
    done = lbp("comp", "Runner", "--name", "other", "-y", cwd=plugin)
    assert done.code == 0, done.err
    code = plugin / "components/runner/other.py"
    code.write_text(code.read_text().replace("you said: ", "other heard: "), encoding="utf-8")
    recording = tmp_path / "other.jsonl"
    done = lbp("dev", "--runner", "other", "--record", str(recording), "-m", "hi", cwd=plugin)
    assert done.code == 0, done.err
    assert done.out == "bot> other heard: hi\n"
    assert json.loads(recording.read_text().splitlines()[0])["runner"] == "other"
    done = lbp("dev", "--replay", str(recording), cwd=plugin)
    assert done.code == 0, done.err
    assert "(runner: other, also chat (--runner NAME)" in done.err
    report = await PluginHarness.replay(plugin, recording)
    assert report.ok, report.describe()
    mismatch = await PluginHarness.replay(plugin, recording, runner="chat")
    assert not mismatch.ok
    assert "other heard: hi" in mismatch.describe()
