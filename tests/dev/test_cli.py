"""``lbp dev`` as an author runs it: real processes, no LangBot installed.

Each test starts ``lbp dev`` (which starts the runtime in-process and ``lbp run`` as
its child) in a plugin folder and checks what it prints and its exit status.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from tests.cli.helpers import lbp
from tests.dev.helpers import ADD_SCRIPT, scaffolded, toolbox, write_script
from tests.support.official import LOCAL_AGENT, materialize, need

pytestmark = pytest.mark.timeout(180)


def test_langbot_is_not_installed() -> None:
    assert importlib.util.find_spec("langbot") is None


def test_a_scaffolded_runner_answers_a_message(tmp_path: Path) -> None:
    plugin = scaffolded(tmp_path)
    done = lbp("dev", "--message", "hi", cwd=plugin)
    assert done.code == 0, done.err
    assert done.out == "bot> you said: hi\n"
    assert "me/starter is running (runner: chat" in done.err
    assert (plugin / ".lbp-dev").is_dir()  # the state folder, kept out of packages
    assert ".lbp-dev/" in (plugin / ".gitignore").read_text()


def test_with_two_runners_the_banner_names_both_and_how_to_pick(tmp_path: Path) -> None:
    plugin = scaffolded(tmp_path)
    done = lbp("comp", "Runner", "--name", "other", "-y", cwd=plugin)
    assert done.code == 0, done.err
    done = lbp("dev", "--message", "hi", cwd=plugin)
    assert done.code == 0, done.err
    assert "(runner: chat, also other (--runner NAME); tools: none" in done.err
    done = lbp("dev", "--runner", "other", "--message", "hi", cwd=plugin)
    assert done.code == 0, done.err
    assert "(runner: other, also chat (--runner NAME); tools: none" in done.err


def test_ctx_log_lines_show_in_the_chat(tmp_path: Path) -> None:
    plugin = scaffolded(tmp_path)
    done = lbp("comp", "Runner", "--name", "noter", "-y", cwd=plugin)
    assert done.code == 0, done.err
    code = plugin / "components/runner/noter.py"
    head = "    async def run(self, ctx: RunnerContext) -> AsyncGenerator[RunnerResult]:\n"
    logs = (
        '        await ctx.log("turn noted")\n'
        '        await ctx.log("fine detail", "debug")\n'
        '        await ctx.log("careful", "warning")\n'
    )
    text = code.read_text(encoding="utf-8")
    assert head in text
    code.write_text(text.replace(head, head + logs), encoding="utf-8")
    done = lbp("dev", "--runner", "noter", "-m", "hi", cwd=plugin)
    assert done.code == 0, done.err
    assert "  [ctx.log] turn noted\n" in done.err
    assert "  [ctx.log warning] careful\n" in done.err
    assert "fine detail" not in done.err
    done = lbp("dev", "--runner", "noter", "--log-level", "debug", "-m", "hi", cwd=plugin)
    assert done.code == 0, done.err
    assert "  [ctx.log debug] fine detail\n" in done.err


def test_a_third_party_plugin_answers_its_runner_a_command_and_a_tool(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    script = write_script(tmp_path, ADD_SCRIPT)
    done = lbp(
        "dev",
        "--llm-script",
        str(script),
        "-m",
        "what is 2 + 40?",
        "-m",
        "!hello bob",
        "-m",
        '/tool add {"a": 1, "b": 2}',
        cwd=plugin,
    )
    assert done.code == 0, done.err
    assert done.out.splitlines() == [
        "bot> The sum is 42, as the add tool says.",
        "bot> hello, bob!",
        'bot> {"sum": 3}',
    ]
    # tool calls and state changes are shown on stderr beside the replies
    assert '→ tool add {"a": 2, "b": 40}' in done.err
    assert '← tool add: {"sum": 42}' in done.err
    assert "⧉ state conversation.turns = 1" in done.err


def test_json_prints_every_event_as_a_line(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    script = write_script(tmp_path, ADD_SCRIPT)
    done = lbp("dev", "--llm-script", str(script), "--json", "-m", "add please", cwd=plugin)
    assert done.code == 0, done.err
    events = [json.loads(line) for line in done.out.splitlines()]
    kinds = [e["kind"] for e in events]
    for kind in (
        "plugin.ready",
        "run.started",
        "tool.call.started",
        "tool.call.completed",
        "state.updated",
        "message.delta",
        "run.completed",
        "run.ended",
    ):
        assert kind in kinds, kind
    assert kinds.index("run.started") < kinds.index("tool.call.started") < kinds.index("run.ended")
    started = next(e for e in events if e["kind"] == "tool.call.started")
    assert started["data"]["data"]["parameters"] == {"a": 2, "b": 40}
    ended = next(e for e in events if e["kind"] == "run.ended")
    assert ended["data"]["status"] == "completed"
    assert ended["run_id"] == started["run_id"]


def test_a_failed_run_exits_1_and_says_so_once(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    done = lbp("dev", "--config", "model=not-a-model", "-m", "hi", cwd=plugin)
    assert done.code == 1
    assert done.out == ""
    failures = [line for line in done.err.splitlines() if "run failed" in line]
    assert len(failures) == 1, done.err  # the view's line, not repeated as the exit reason
    assert failures[0].startswith("  ✗ run failed: ")
    assert "not-a-model" in failures[0]
    assert "not authorized" in failures[0]


def test_a_failed_run_with_json_keeps_its_line_on_stderr(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    done = lbp("dev", "--json", "--config", "model=not-a-model", "-m", "hi", cwd=plugin)
    assert done.code == 1
    failures = [line for line in done.err.splitlines() if "run failed" in line]
    assert len(failures) == 1, done.err
    assert failures[0].startswith("lbp dev: run failed: ")
    ended = [json.loads(line) for line in done.out.splitlines()]
    assert [e["data"]["status"] for e in ended if e["kind"] == "run.ended"] == ["failed"]


def test_the_official_local_agent_answers_with_the_echo_model(tmp_path: Path) -> None:
    plugin = materialize(need(LOCAL_AGENT), "", tmp_path / "local-agent")
    done = lbp("dev", "-m", "hello there", cwd=plugin)
    assert done.code == 0, done.err
    assert done.out == "bot> echo: hello there\n"


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--runner", "nope", "-m", "hi"], "the plugin has no runner 'nope' (runners: agent)"),
        (["--llm-model", "gpt", "-m", "hi"], "--llm-model needs --llm-url"),
        (["--llm-url", "ftp://x", "--llm-model", "m", "-m", "hi"], "is not an http(s) URL"),
        (["--config", "novalue", "-m", "hi"], "expected KEY=VALUE"),
        (["--web", "-m", "hi"], "--message and --web exclude each other"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path: Path, args: list[str], says: str) -> None:
    plugin = toolbox(tmp_path)
    done = lbp("dev", *args, cwd=plugin)
    assert done.code == 2, done.err
    lines = [line for line in done.err.splitlines() if line.startswith("lbp dev: ")]
    assert len(lines) == 1, done.err
    assert says in lines[0]


def test_a_bad_script_is_refused_before_anything_starts(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    script = tmp_path / "script.json"
    script.write_text("[{", encoding="utf-8")
    done = lbp("dev", "--llm-script", str(script), "-m", "hi", cwd=plugin)
    assert done.code == 2
    assert done.err.startswith("lbp dev: ")
    assert "does not parse" in done.err
    assert len(done.err.splitlines()) == 1
    assert not (plugin / ".lbp-dev").exists()


def test_not_a_plugin_folder(tmp_path: Path) -> None:
    done = lbp("dev", "-m", "hi", cwd=tmp_path)
    assert done.code == 2
    assert (
        done.err
        == f"lbp dev: no manifest.yaml in {tmp_path}: not a plugin folder (lbp init makes one)\n"
    )


def test_a_plugin_broken_at_start_names_the_file_and_line(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    (plugin / "components" / "tools" / "add.py").write_text("def broken(:\n", encoding="utf-8")
    done = lbp("dev", "-m", "hi", cwd=plugin)
    assert done.code == 2, done.err
    assert done.err.splitlines()[0] == (
        "lbp dev: components/tools/add.py:1: syntax error: invalid syntax"
    ), done.err


def test_a_busy_web_port_is_one_line_and_exit_1(tmp_path: Path) -> None:
    import socket

    plugin = toolbox(tmp_path)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = lbp("dev", "--web", "--port", str(port), cwd=plugin)
    assert done.code == 1, done.err
    lines = [line for line in done.err.splitlines() if line.startswith("lbp dev: ")]
    assert lines == [
        f"lbp dev: cannot serve the page on 127.0.0.1:{port}: address already in use; "
        "choose another with --port"
    ], done.err


def test_the_chat_reads_lines_until_quit(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    script = write_script(tmp_path, ADD_SCRIPT)
    lines = [
        "what is 2 + 40?",
        "!hello chat",
        '/tool add {"a": 5, "b": 6}',
        "/tool add {oops",
        '/event PersonNormalMessageReceived {"text": "stop"}',
        '/event PersonNormalMessageReceived {"text": "go on"}',
        "/event NoSuchEvent {}",
        "/help",
        "/reset",
        "again",
        "/quit",
        "never sent",
    ]
    done = lbp("dev", "--llm-script", str(script), cwd=plugin, stdin="\n".join(lines) + "\n")
    assert done.code == 0, done.err
    out = done.out
    assert "bot> The sum is 42, as the add tool says." in out
    assert '  → tool add {"a": 2, "b": 40}' in out
    assert "bot> hello, chat!" in out
    assert 'bot> {"sum": 11}' in out
    assert "✗ /tool add: the parameters are not JSON" in out
    # the listener prevents the default for "stop" only
    assert "  event PersonNormalMessageReceived delivered (is_prevent_default)\n" in out
    assert "  event PersonNormalMessageReceived delivered\n" in out
    assert "✗ unknown event_name 'NoSuchEvent'; known events: " in out
    assert "/event NAME {json}   emit an event" in out  # /help
    assert "  new conversation dev-" in out
    # the new conversation starts its turn count again
    assert out.count("⧉ state conversation.turns = 1") == 2
    assert "never sent" not in out


def test_box_nsjail_offers_the_sandbox_tools(tmp_path: Path) -> None:
    from tests.box.helpers import require_nsjail

    require_nsjail()
    plugin = toolbox(tmp_path)
    command = "python3 -c 'print(6 * 7)'"
    script = write_script(
        tmp_path,
        [{"tool_calls": [{"name": "exec", "arguments": {"command": command}}]}, "It is 42."],
    )
    done = lbp(
        "dev", "--box", "nsjail", "--llm-script", str(script), "-m", "six times seven?", cwd=plugin
    )
    assert done.code == 0, done.err
    assert done.out == "bot> It is 42.\n"
    assert "sandbox tools for the runner: exec, read, write, export_box_files" in done.err
    # LangBot 4.11.2's answer (langbot_plugin.host.sandbox_tools)
    answer = '{"session_id": "lbp-dev", "backend": "nsjail", "status": "completed", "ok": true'
    assert f'← tool exec: {answer}, "exit_code": 0, "stdout": "42\\n"' in done.err
