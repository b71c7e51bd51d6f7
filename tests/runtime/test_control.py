"""``lbp rt`` over real sockets: handshake, debug registration, scoping, dispatch, forwarding."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from websockets.exceptions import InvalidStatus

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.host.run_context import build_run_context
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import NotReadyError
from langbot_plugin.rpc.transport_ws import connect_ws
from langbot_plugin.stack import host_here
from tests.runtime.peers import ScriptedPlugin, running_runtime
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio

WIRE = Path(__file__).parent.parent / "fixtures/wire/host-4.11.2_to_runtime-0.7.x_session.jsonl"


def control_url(runtime: Any) -> str:
    return f"ws://127.0.0.1:{runtime.options.control_port}/control/ws"


def run_context(text: str, run_id: str = "run-1") -> dict[str, Any]:
    return build_run_context(text, run_id=run_id, available_apis={}, timeout=None)


async def test_actions_wait_for_set_runtime_config() -> None:
    async with (
        running_runtime() as runtime,
        host_here(runtime, LocalHost(), handshake=False) as host,
    ):
        assert await host.session.call("__ping") == {"message": "pong"}
        with pytest.raises(NotReadyError, match="set_runtime_config"):
            await host.list_plugins()
        await host.handshake()
        assert await host.list_plugins() == []


async def test_replayed_real_handshake_is_accepted() -> None:
    """The first requests the real 4.11.2 host sent, replayed verbatim."""
    records = [json.loads(line) for line in WIRE.read_text().splitlines()[:12]]
    requests = [r["msg"] for r in records if r["dir"] == "host->up" and "action" in r["msg"]][:4]
    assert [r["action"] for r in requests] == [
        "__ping",
        "set_runtime_config",
        "list_plugins",
        "reconcile_plugin_installations",
    ]
    async with running_runtime() as runtime, connect_ws(control_url(runtime)) as raw:
        replies: list[dict[str, Any]] = []
        for request in requests:
            await raw.send.send(json.dumps(request))
            replies.append(reply := json.loads(str(await raw.receive.receive())))
            assert (reply["seq_id"], reply["code"]) == (request["seq_id"], 0), reply
        assert replies[-1]["data"]["missing_artifacts"] == []


async def test_debug_plugin_end_to_end() -> None:
    local = LocalHost()
    plugin = ScriptedPlugin()
    async with (
        running_runtime() as runtime,
        host_here(runtime, local) as host,
    ):
        key = await host.get_debug_key()
        async with plugin.connected(runtime, key):
            # registration asked the host for settings, then initialized the plugin with them
            assert [c.action for c in local.calls[:2]] == [
                "initialize_plugin_settings",
                "get_plugin_settings",
            ]
            assert local.calls[0].context == host.workspace.workspace_context()
            assert plugin.settings is not None
            assert plugin.settings["installation_uuid"]

            plugins = await host.list_plugins()
            assert [(p.identity, p.debug, p.status) for p in plugins] == [
                ("tester/echoplug", True, "initialized")
            ]
            assert {c.manifest.owner for c in plugins[0].components} == {"tester/echoplug"}
            other = host.bridge.model_copy(update={"installation_uuid": "someone-else"})
            assert await host.list_plugins(other) == []

            runners = await host.list_runners()
            manifest = runners[0]["manifest"]
            assert manifest["id"] == "plugin:tester/echoplug/echo"
            assert manifest["capabilities"]["streaming"] is True
            assert "not_a_capability" not in manifest["capabilities"]
            assert manifest["permissions"]["models"] == ["invoke"]
            assert manifest["usages"] == ["agent"]

            items = [
                i
                async for i in host.run_runner(
                    "tester", "echoplug", "echo", run_context("hi there")
                )
            ]
            assert items[-1]["data"]["message"]["content"] == "echo-runner: hi there"

            ctx = {
                "command": "hello",
                "crt_params": ["bob", "ann"],
                "params": ["hello", "bob", "ann"],
            }
            replies = await host.execute_command(ctx)
            assert [r["text"] for r in replies] == ["hello, bob", "hello, ann"]
            failed = await host.execute_command({"command": "hello", "crt_params": []})
            assert failed == [
                {
                    "text": "a name is needed",
                    "image_base64": None,
                    "image_url": None,
                    "file_url": None,
                    "file_name": None,
                    "error": None,
                }
            ]

            assert await host.call_tool("adder", {"a": 2, "b": 3}) == {"sum": 5}
            emitted = await host.emit_event({"event_name": "PersonMessageReceived", "event": {}})
            assert emitted.event_context["is_prevent_default"] is True
            assert len(emitted.emitted_plugins) == 1
        with anyio.fail_after(PATIENCE):
            await runtime.state.registry.wait_for(lambda registry: len(registry) == 0)
        assert await host.list_plugins() == []


async def test_forwarded_calls_carry_the_connection_identity_not_the_payloads() -> None:
    local = LocalHost()
    plugin = ScriptedPlugin()
    async with (
        running_runtime() as runtime,
        host_here(runtime, local) as host,
    ):
        key = await host.get_debug_key()
        async with plugin.connected(runtime, key) as session:
            models = await session.call("get_llm_models")
            assert models == {"llm_models": ["scripted-model"]}
            spoofed = {
                "llm_model_uuid": "scripted-model",
                "messages": [{"role": "user", "content": "2+2"}],
                "caller_plugin_identity": "evil/plugin",
                "workspace_uuid": "another-workspace",
                "timeout": 5,
            }
            answer = await session.call("invoke_llm", spoofed)
            assert answer["message"]["content"] == "scripted reply to: 2+2"
            call = local.calls_of("invoke_llm")[0]
            assert call.data["caller_plugin_identity"] == "tester/echoplug"
            assert "workspace_uuid" not in call.data
            assert "timeout" not in call.data
            assert call.context is not None
            assert call.context["installation_uuid"] == plugin.settings["installation_uuid"]  # type: ignore[index]
            assert (
                ActionScope.model_validate(call.context).workspace_key
                == host.workspace.workspace_key
            )

            chunks = [
                item
                async for item in session.stream(
                    "invoke_llm_stream", {"llm_model_uuid": "scripted-model", "messages": []}
                )
            ]
            assert "".join(c["chunk"]["content"] for c in chunks) == "scripted reply to: "

            await session.call("set_plugin_storage", {"key": "k", "value_base64": "aGk="})
            assert local.storage[("plugin", "tester/echoplug", "k")] == b"hi"
            assert (await session.call("get_plugin_storage", {"key": "k"}))[
                "value_base64"
            ] == "aGk="


async def test_host_cancel_closes_the_runners_generator() -> None:
    plugin = ScriptedPlugin()
    async with (
        running_runtime() as runtime,
        host_here(runtime, LocalHost()) as host,
    ):
        key = await host.get_debug_key()
        async with plugin.connected(runtime, key):
            run = host.run_runner("tester", "echoplug", "echo", run_context("forever"))
            seen = 0
            async for _ in run:
                seen += 1
                if seen == 3:
                    break
            await run.aclose()
            with anyio.fail_after(PATIENCE):
                await plugin.run_closed.wait()


async def test_a_wrong_debug_key_is_refused_at_the_door() -> None:
    async with running_runtime() as runtime:
        url = f"ws://127.0.0.1:{runtime.options.debug_port}/plugin/debug/ws"
        with pytest.raises(InvalidStatus) as info:
            async with connect_ws(url, headers={"X-LangBot-Plugin-Debug-Key": "x" * 64}):
                pass
        assert info.value.response.status_code == 401


async def test_control_token_is_required_when_configured() -> None:
    token = "t" * 40
    async with running_runtime(control_token=token) as runtime:
        with pytest.raises(InvalidStatus):
            async with connect_ws(control_url(runtime)):
                pass
        async with PluginRuntimeClient.connect(
            control_url(runtime), LocalHost(), token=token
        ) as host:
            assert await host.list_plugins() == []


def test_unauthenticated_public_bind_is_refused() -> None:
    from langbot_plugin.runtime.state import RuntimeOptions

    with pytest.raises(ValueError, match="without a token"):
        RuntimeOptions(host="0.0.0.0", control_token=None).check()


async def test_healthz_answers_on_both_ports() -> None:
    import aiohttp

    async with running_runtime() as runtime, aiohttp.ClientSession() as http:
        for port in (runtime.options.control_port, runtime.options.debug_port):
            async with http.get(f"http://127.0.0.1:{port}/healthz") as response:
                assert (response.status, await response.text()) == (200, "ok\n")
            async with http.get(f"http://127.0.0.1:{port}/nowhere") as response:
                assert response.status == 404


async def test_the_05_dialect_names_serve_the_same_runners() -> None:
    """A 0.5 host says list_agent_runners / run_agent (its unflagged streams: tests/rpc)."""
    plugin = ScriptedPlugin()
    async with (
        running_runtime() as runtime,
        host_here(runtime, LocalHost()) as host,
    ):
        key = await host.get_debug_key()
        async with plugin.connected(runtime, key):
            listed = await host.session.call("list_agent_runners", {"include_plugins": None})
            assert [r["runner_name"] for r in listed["runners"]] == ["echo"]
            params = {
                "plugin_author": "tester",
                "plugin_name": "echoplug",
                "runner_name": "echo",
                "context": run_context("old host"),
            }
            raw = await host.session.stream("run_agent", params).collect()
            assert raw[-1]["data"]["message"]["content"] == "echo-runner: old host"
