"""The pieces of ``lbp dev`` that need no processes: scripts, log records, config, input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from langbot_plugin.dev.events import LogRecordParser
from langbot_plugin.dev.host_side import runner_config
from langbot_plugin.dev.inputs import _name_and_json  # pyright: ignore[reportPrivateUsage]
from langbot_plugin.dev.models import ModelSetupError, echo_model, load_script

pytestmark = pytest.mark.anyio


async def test_the_echo_model_repeats_the_last_user_text() -> None:
    model = echo_model()
    message, usage = await model.invoke(
        [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": "hello"}]},
        ],
        [],
    )
    assert message["content"] == "echo: hello"
    assert usage is not None
    chunks = [item["chunk"] async for item in model.stream([{"role": "user", "content": "x"}], [])]
    assert "".join(c["content"] for c in chunks) == "echo: x"
    assert chunks[-1]["is_final"] is True


async def test_a_script_expands_short_tool_calls(tmp_path: Path) -> None:
    path = tmp_path / "s.yaml"
    path.write_text(
        "replies:\n  - tool_calls: [{name: add, arguments: {a: 1}}]\n  - done\n", encoding="utf-8"
    )
    model = load_script(path)
    first, _ = await model.invoke([], [])
    assert first["tool_calls"] == [
        {"id": "call-1", "type": "function", "function": {"name": "add", "arguments": '{"a": 1}'}}
    ]
    assert first["content"] == ""
    assert (await model.invoke([], []))[0]["content"] == "done"
    assert (await model.invoke([], []))[0]["content"] == "done"  # the last one repeats


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("{}", "expected a non-empty list of replies"),
        ("[]", "expected a non-empty list of replies"),
        ("[3]", "reply 1 is neither a text nor a message object"),
        ('[{"tool_calls": {}}]', "reply 1: tool_calls is not a list"),
        ('[{"tool_calls": [{"arguments": {}}]}]', "tool call 1 has no name"),
        ("[", "does not parse"),
    ],
)
def test_a_bad_script_says_what_is_wrong(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "s.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelSetupError, match=says.replace("(", r"\(")):
        load_script(path)


def test_a_missing_script_is_named(tmp_path: Path) -> None:
    with pytest.raises(ModelSetupError, match="cannot read"):
        load_script(tmp_path / "nope.json")


def test_log_lines_group_into_records() -> None:
    parser = LogRecordParser()
    lines = [
        "2026-12-01 10:00:00.001 INFO    langbot_plugin.run: connecting",
        "2026-12-01 10:00:00.002 ERROR   langbot_plugin.run: a.py changed, but cannot be loaded:",
        "  a.py:3: syntax error: invalid syntax",
        "      def x(:",
        "printed by the plugin",
        "2026-12-01 10:00:00.003 WARNING my.plugin: careful",
    ]
    records = [record for line in lines for record in parser.feed(line)] + parser.flush()
    # after an error every line that is not a new record belongs to it (a traceback)
    assert [(r["level"], r["logger"]) for r in records] == [
        ("INFO", "langbot_plugin.run"),
        ("ERROR", "langbot_plugin.run"),
        ("WARNING", "my.plugin"),
    ]
    error = records[1]
    assert error["text"].splitlines()[1:3] == [
        "  a.py:3: syntax error: invalid syntax",
        "      def x(:",
    ]


def test_a_print_after_an_info_line_is_its_own_record() -> None:
    parser = LogRecordParser()
    records = parser.feed("2026-12-01 10:00:00.001 INFO    x: hi") + parser.feed("hello")
    records += parser.flush()
    assert [(r["level"], r["text"]) for r in records] == [("INFO", "hi"), ("OUTPUT", "hello")]


def test_runner_config_fills_defaults_and_the_model() -> None:
    manifest = {
        "config_schema": [
            {"name": "model", "type": "llm-model-selector", "default": ""},
            {"name": "fallback", "type": "model-fallback-selector", "default": {}},
            {"name": "prompt", "type": "string", "default": "hi"},
            {"type": "string"},
        ]
    }
    assert runner_config(manifest, "m1", {"prompt": "yo"}) == {
        "model": "m1",
        "fallback": {"primary": "m1", "fallbacks": []},
        "prompt": "yo",
    }


def test_tool_and_event_lines_parse_their_json() -> None:
    assert _name_and_json(' add {"a": 1}', "tool") == ("add", {"a": 1})
    assert _name_and_json(" add", "tool") == ("add", {})
    with pytest.raises(ValueError, match="not JSON"):
        _name_and_json(" add {a}", "tool")
    with pytest.raises(ValueError, match="must be a JSON object"):
        _name_and_json(" add [1]", "tool")
    with pytest.raises(ValueError, match="needs a name"):
        _name_and_json("", "event")
    assert json.dumps(_name_and_json(" E {}", "event")) == '["E", {}]'
