"""The session driver in-process: reload that survives a broken save, persistence, a
real OpenAI-compatible endpoint over HTTP, and a local Box with nsjail.

Each test runs a :class:`DevSession` (the runtime in this process, ``lbp run`` a real
child process) and waits on its events, never on time.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest
from aiohttp import web

from langbot_plugin.dev import DevError, DevEvent, DevSession, load_script, openai_model
from langbot_plugin.dev.box import LocalBox
from tests.box.helpers import require_nsjail
from tests.conftest import free_port
from tests.dev.helpers import toolbox, write_script

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(180)]

SEEDAPI = Path(__file__).resolve().parents[1] / "fixtures" / "plugins" / "seedapi"


class Seen:
    """Collects a session's events; ``wait(kind)`` returns the next one of a kind."""

    def __init__(self) -> None:
        self.events: list[DevEvent] = []
        self._changed = anyio.Event()
        self._taken = 0

    def __call__(self, event: DevEvent) -> None:
        self.events.append(event)
        self._changed.set()
        self._changed = anyio.Event()

    async def wait(self, kind: str, seconds: float = 60) -> DevEvent:
        with anyio.fail_after(seconds):
            while True:
                for index in range(self._taken, len(self.events)):
                    if self.events[index].kind == kind:
                        self._taken = index + 1
                        return self.events[index]
                await self._changed.wait()

    def kinds(self) -> list[str]:
        return [e.kind for e in self.events]


async def test_a_broken_save_keeps_the_last_good_version_serving(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    runner = plugin / "components" / "agent_runner" / "agent.py"
    good = runner.read_text()
    seen = Seen()
    session = DevSession(plugin, model=load_script(write_script(tmp_path, ["first answer"])))
    session.events.subscribe(seen)
    async with session as dev:
        await seen.wait("plugin.ready")
        runner.write_text(good + "\ndef oops(:\n")
        broken = await seen.wait("plugin.broken")
        assert broken.data["text"].splitlines() == [
            "components/agent_runner/agent.py changed, but the plugin cannot be loaded; the "
            "previous version of thirdparty/toolbox keeps serving. Fix this and save again:",
            f"  components/agent_runner/agent.py:{len(good.splitlines()) + 2}: syntax error: "
            "invalid syntax",
            "      def oops(:",
        ]
        outcome = await dev.send("still there?")
        assert (outcome.status, outcome.text) == ("completed", "first answer")

        runner.write_text(
            good.replace('greeting = str(ctx.config.get("greeting") or "")', 'greeting = "v2: "')
        )
        await seen.wait("plugin.reloaded")
        outcome = await dev.send("and now?")
        assert (outcome.status, outcome.text) == ("completed", "v2: first answer")


async def test_state_and_storage_persist_until_fresh(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    state = tmp_path / "state"
    for expected in (1, 2):
        async with DevSession(plugin, state_dir=state) as dev:
            outcome = await dev.send("count")
            updates = [r.data for r in outcome.results if r.type == "state.updated"]
            assert updates == [{"scope": "conversation", "key": "turns", "value": expected}]
            dev.host.storage[("plugin", dev.identity, "k")] = f"v{expected}".encode()
    async with DevSession(plugin, state_dir=state) as dev:
        assert dev.host.storage[("plugin", dev.identity, "k")] == b"v2"
        await dev.reset()  # a new conversation starts from nothing
        outcome = await dev.send("count")
        assert [r.data["value"] for r in outcome.results if r.type == "state.updated"] == [1]
    async with DevSession(plugin, state_dir=state, fresh=True) as dev:
        assert dev.host.storage == {}


@asynccontextmanager
async def fake_openai(requests: list[dict[str, Any]]) -> AsyncGenerator[str]:
    """An OpenAI-compatible endpoint on 127.0.0.1: a tool call first, then a streamed text."""

    async def chat(request: web.Request) -> web.StreamResponse:
        body = await request.json()
        requests.append({"body": body, "auth": request.headers.get("Authorization")})
        asked_before = any(m.get("role") == "tool" for m in body["messages"])
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def event(delta: dict[str, Any], finish: str | None = None) -> None:
            chunk = {"choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

        if not asked_before:
            call = {
                "index": 0,
                "id": "call-7",
                "function": {"name": "add", "arguments": '{"a": 2,'},
            }
            await event({"role": "assistant", "tool_calls": [call]})
            await event({"tool_calls": [{"index": 0, "function": {"arguments": ' "b": 5}'}}]})
            await event({}, "tool_calls")
        else:
            for piece in ("The answer ", "is ", "7."):
                await event({"content": piece})
            await event({}, "stop")
        usage = {"prompt_tokens": 11, "completion_tokens": 3, "total_tokens": 14}
        await response.write(f"data: {json.dumps({'choices': [], 'usage': usage})}\n\n".encode())
        await response.write(b"data: [DONE]\n\n")
        return response

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        await runner.cleanup()


async def test_an_openai_compatible_endpoint_drives_the_runner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DEV_TEST_KEY", "sk-local-test")
    requests: list[dict[str, Any]] = []
    plugin = toolbox(tmp_path)
    async with fake_openai(requests) as url:
        model = openai_model(url, "fake-model", key_env="DEV_TEST_KEY")
        async with DevSession(plugin, model=model) as dev:
            outcome = await dev.send("add 2 and 5")
    assert (outcome.status, outcome.text) == ("completed", "The answer is 7.")
    completed = [r.data for r in outcome.results if r.type == "tool.call.completed"]
    assert completed == [
        {"tool_call_id": "call-7", "tool_name": "add", "result": {"sum": 7}, "error": None}
    ]
    assert [r["auth"] for r in requests] == ["Bearer sk-local-test"] * 2
    first = requests[0]["body"]
    assert first["model"] == "fake-model"
    assert first["stream"] is True
    assert first["tools"][0]["function"]["name"] == "add"
    assert first["messages"] == [{"role": "user", "content": "add 2 and 5"}]
    second = requests[1]["body"]["messages"]
    assert second[1]["tool_calls"][0]["function"] == {
        "name": "add",
        "arguments": '{"a": 2, "b": 5}',
    }
    assert second[2] == {"role": "tool", "content": '{"sum": 7}', "tool_call_id": "call-7"}


async def test_an_unreachable_endpoint_fails_the_run_plainly(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    model = openai_model(f"http://127.0.0.1:{free_port()}/v1", "m")
    async with DevSession(plugin, model=model) as dev:
        outcome = await dev.send("hi")
    assert outcome.status == "failed"
    assert outcome.error is not None
    assert "cannot reach the model endpoint" in outcome.error["error"]


async def test_a_runner_uses_the_sandbox_tools_of_a_local_box(tmp_path: Path) -> None:
    require_nsjail()
    plugin = toolbox(tmp_path)
    script = write_script(
        tmp_path,
        [
            {
                "content": "",
                "tool_calls": [
                    {
                        "name": "exec",
                        "arguments": {"command": "echo 42 > answer.txt && cat answer.txt"},
                    },
                ],
            },
            {
                "content": "",
                "tool_calls": [
                    {"name": "export_box_files", "arguments": {"paths": ["/workspace/answer.txt"]}}
                ],
            },
            "Done: answer.txt exported.",
        ],
    )
    state = tmp_path / "state"
    async with LocalBox("nsjail", state / "box").running() as box:
        session = DevSession(plugin, model=load_script(script), state_dir=state, box=box)
        async with session as dev:
            outcome = await dev.send("compute and export")
    assert outcome.status == "completed", outcome.error
    completed = [r.data for r in outcome.results if r.type == "tool.call.completed"]
    assert [c["tool_name"] for c in completed] == ["exec", "export_box_files"]
    assert completed[0]["result"]["exit_code"] == 0
    assert completed[0]["result"]["stdout"].strip().endswith("42")
    exported = completed[1]["result"]["files"]
    assert [f["path"] for f in exported] == ["/workspace/answer.txt"]
    assert await anyio.Path(exported[0]["saved_to"]).read_text() == "42\n"


async def test_a_runner_reads_its_mounted_artifact_in_the_local_box(tmp_path: Path) -> None:
    """``lbp dev --box``: a run's ``exec`` goes through the host library's Box service,
    so it sees the artifacts the run mounted (issue 23)."""
    require_nsjail()
    state = tmp_path / "state"
    seen = Seen()
    async with LocalBox("nsjail", state / "box").running() as box:
        session = DevSession(SEEDAPI, runner="mounter", state_dir=state, box=box)
        session.events.subscribe(seen)
        async with session as dev:
            made = await dev.send("make")
            read = await dev.send("read")
    assert made.status == "completed", made.error
    digest = made.text
    assert read.status == "completed", read.error
    answer = json.loads(read.text or "{}")
    path = answer["mount"]["path"]
    assert path.startswith("/opt/langbot-artifacts/")
    assert answer["exec"]["exit_code"] == 0, answer["exec"]
    assert answer["exec"]["stdout"].split() == [digest, path]
    # the terminal still shows the runner's exec call and its result
    (call,) = [e.data for e in seen.events if e.kind == "tool.call"]
    assert call == {"name": "exec", "arguments": {"command": f"sha256sum {path}"}}
    assert [e.data["name"] for e in seen.events if e.kind == "tool.result"] == ["exec"]


async def test_a_plugin_process_that_ends_is_reported_and_refuses_runs(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    seen = Seen()
    session = DevSession(plugin)
    session.events.subscribe(seen)
    async with session as dev:
        process = dev.plugin.process
        assert process is not None
        process.kill()
        exited = await seen.wait("plugin.exited")
        assert exited.data["code"] != 0
        with pytest.raises(DevError, match="the plugin process has ended"):
            await dev.send("hi")


async def test_one_session_per_state_folder(tmp_path: Path) -> None:
    plugin = toolbox(tmp_path)
    async with DevSession(plugin):
        with pytest.raises(DevError, match="is in use by another lbp dev") as refused:
            await DevSession(plugin, fresh=True).__aenter__()
        assert refused.value.usage is False
        assert (plugin / ".lbp-dev" / "host.sqlite3").is_file()  # fresh did not touch it
