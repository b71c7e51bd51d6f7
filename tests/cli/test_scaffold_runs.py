"""A scaffolded plugin really runs: in the worker, through ``lbp rt`` with ``lbp run``,
and installed from the package ``lbp build`` wrote, as the host installs it.

Every kind is covered, including a Page, which the reference's scaffold could not start.
"""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from langbot_plugin.api.definition.components.page import PageRequest
from langbot_plugin.host import LocalHost, PluginRuntimeClient
from tests.cli.helpers import KINDS, child_env, lbp_command, ok
from tests.e2e import processes as e2e
from tests.runtime.peers import running_runtime
from tests.support.loaded import loaded_plugin
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio


WIRE = Path(__file__).parent.parent / "fixtures/wire/host-4.11.2_to_runtime-0.7.x_session.jsonl"


def captured_run_context(text: str) -> dict[str, Any]:
    """The run context the real 4.11.2 host sent, with ``text`` as the user's input."""
    for line in WIRE.read_text().splitlines():
        message = json.loads(line).get("msg") or {}
        if message.get("action") == "run_runner":
            context: dict[str, Any] = message["data"]["context"]
            context["input"]["text"] = text
            context["input"]["contents"] = [{"type": "text", "text": text}]
            # the captured deadline has long passed; the host sets one ahead of the run
            context["runtime"]["deadline_at"] = time.time() + 600
            return context
    raise AssertionError(f"no run_runner request in {WIRE}")


def command_context(*words: str) -> dict[str, Any]:
    return {
        "query_id": 1,
        "query_uuid": "query-1",
        "session": {"launcher_type": "person", "launcher_id": "user-1", "sender_id": "user-1"},
        "command_text": " ".join(words),
        "full_command_text": "!" + " ".join(words),
        "command": words[0],
        "crt_command": words[0],
        "params": list(words),
        "crt_params": list(words[1:]),
        "privilege": 1,
    }


async def test_every_scaffolded_component_initializes_and_works(full_plugin: Path) -> None:
    from langbot_plugin.api.entities import events
    from langbot_plugin.api.entities.builtin.command.context import ExecuteContext
    from langbot_plugin.api.entities.builtin.provider.session import LauncherTypes, Session
    from langbot_plugin.api.entities.builtin.rag.context import RetrievalContext
    from langbot_plugin.api.entities.builtin.rag.models import (
        FileMetadata,
        FileObject,
        IngestionContext,
        ParseContext,
    )

    async with loaded_plugin(full_plugin, {"greeting": "hi"}) as loaded:
        assert loaded.status == "initialized"
        instances: dict[str, Any] = {c.kind: c.instance for c in loaded.components}
        assert set(instances) == set(KINDS)
        assert all(instance is not None for instance in instances.values())

        page = await instances["Page"].handle_api(PageRequest(endpoint="/status", method="GET"))
        assert (page.data, page.error) == ({"visits": 1, "settings": 1}, None)
        missing = await instances["Page"].handle_api(PageRequest(endpoint="/nope", method="POST"))
        assert missing.error == "no endpoint POST /nope"

        session = Session(launcher_type=LauncherTypes.PERSON, launcher_id="user-1")
        tool = await instances["Tool"].call({"text": "a bc"}, session, 1)
        assert tool == {"characters": 4, "words": 2}

        context = ExecuteContext.model_validate(command_context("command", "echo", "hi", "you"))
        replies = [r async for r in instances["Command"]._execute(context)]
        assert [r.text for r in replies] == ["hi you"]

        parsed = await instances["Parser"].parse(
            ParseContext(
                file_content=b"# Title\nbody text\n\nplain paragraph",
                mime_type="text/markdown",
                filename="a.md",
            )
        )
        assert [(s.heading, s.content) for s in parsed.sections] == [
            ("Title", "body text"),
            (None, "plain paragraph"),
        ]

        engine = instances["KnowledgeEngine"]
        metadata = FileMetadata(
            filename="a.md",
            file_size=10,
            mime_type="text/markdown",
            document_id="doc-1",
            knowledge_base_id="kb-1",
        )
        ingested = await engine.ingest(
            IngestionContext(
                file_object=FileObject(metadata=metadata, storage_path="a.md"),
                knowledge_base_id="kb-1",
                parsed_content=parsed,
            )
        )
        assert (ingested.status.value, ingested.chunks_created) == ("completed", 2)
        found = await engine.retrieve(RetrievalContext(query="plain", knowledge_base_id="kb-1"))
        assert found.total_found == 1
        assert await engine.delete_document("kb-1", "doc-1") is True

        listener = instances["EventListener"]
        assert listener.handlers_for(events.PersonNormalMessageReceived)
        assert listener.handlers_for(events.GroupNormalMessageReceived)


async def wait_registered(stderr: Any) -> str:
    """Read ``lbp run``'s log until it reports the registration; return what was read."""
    seen = b""
    with anyio.fail_after(60):
        async for chunk in stderr:
            seen += chunk
            if b" registered at " in seen:
                return seen.decode()
    raise AssertionError(f"lbp run ended before registering:\n{seen.decode()}")


async def test_a_scaffolded_plugin_serves_through_the_runtime(
    full_plugin: Path, tmp_path: Path
) -> None:
    async with (
        running_runtime(data_dir=tmp_path / "rt-data") as runtime,
        PluginRuntimeClient.connect(
            f"ws://127.0.0.1:{runtime.options.control_port}/control/ws", LocalHost()
        ) as host,
    ):
        key = await host.get_debug_key()
        (full_plugin / ".env").write_text(
            f"DEBUG_RUNTIME_WS_URL=ws://127.0.0.1:{runtime.options.debug_port}/plugin/debug/ws\n"
            f"PLUGIN_DEBUG_KEY={key}\n"
        )
        process = await anyio.open_process(
            lbp_command("run"), cwd=full_plugin, env=child_env(), stderr=subprocess.PIPE
        )
        try:
            assert process.stderr is not None
            await wait_registered(process.stderr)
            (plugin,) = await host.list_plugins()
            assert (plugin.author, plugin.name, plugin.status) == ("tester", "demo", "initialized")
            kinds = sorted(c.manifest.kind for c in plugin.components)
            assert kinds == sorted(KINDS)

            runners = sorted(r["runner_name"] for r in await host.list_runners())
            assert runners == ["agentrunner", "runner"]  # the 0.5 and the 0.7 scaffold
            for name in runners:
                run = captured_run_context("hello")
                items = [i async for i in host.run_runner("tester", "demo", name, run)]
                assert items[-1]["type"] == "run.completed"
                assert items[-1]["data"]["message"]["content"] == "you said: hello"

            replies = await host.execute_command(command_context("command", "echo", "a", "b"))
            assert [r["text"] for r in replies] == ["a b"]
            replies = await host.execute_command(command_context("command", "what"))
            assert [r["text"] for r in replies] == ["no subcommand 'what'; try !command"]

            session = command_context("tool")["session"]
            answer = await host.call_tool("tool", {"text": "one two"}, session=session, query_id=1)
            assert answer == {
                "characters": 7,
                "words": 2,
            }
        finally:
            process.terminate()
            with anyio.fail_after(PATIENCE):
                await process.wait()


async def test_a_built_package_installs_and_serves(full_plugin: Path, tmp_path: Path) -> None:
    ok("build", cwd=full_plugin)
    content = (full_plugin / "dist" / "tester-demo-0.1.0.lbpkg").read_bytes()
    async with e2e.lbp_rt(tmp_path) as runtime, e2e.host_for(runtime) as host:
        binding, result = await host.install_package(content)
        assert result.state == "running"
        (plugin,) = await host.list_plugins(binding)
        assert (plugin.identity, plugin.status) == ("tester/demo", "initialized")
        assert sorted(c.manifest.kind for c in plugin.components) == sorted(KINDS)
        pages = plugin.manifest.spec["pages"]
        assert pages == [
            {"id": "page", "label": {"en_US": "Page"}, "path": "components/pages/page.html"}
        ]

        run = e2e.run_context("installed")
        items = [
            i async for i in host.run_runner("tester", "demo", "agentrunner", run, scope=binding)
        ]
        assert items[-1]["data"]["message"]["content"] == "you said: installed"
        replies = await host.execute_command(
            e2e.command_context("command echo from package"), scope=binding
        )
        assert [r["text"] for r in replies] == ["from package"]
