"""The host-side library against a real ``lbp rt``: spawned over stdio the way the released
host spawns it (``StdioClientController`` + a ``Handler`` subclass), and dialled over WebSocket."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from langbot_plugin.entities.io.actions.enums import CommonAction, LangBotToRuntimeAction
from langbot_plugin.entities.io.errors import ActionCallError, ActionCallTimeoutError
from langbot_plugin.rpc.errors import ActionNotFoundError, ConnectionClosedError
from langbot_plugin.runtime.io.connection import Connection
from langbot_plugin.runtime.io.controller import Controller
from langbot_plugin.runtime.io.controllers.ws.client import WebSocketClientController
from langbot_plugin.runtime.io.handler import Handler
from langbot_plugin.runtime.security import PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER
from tests.conftest import free_port
from tests.e2e.processes import (
    ECHO_PLUGIN,
    command_context,
    copy_plugin,
    lbp_rt,
    lbp_run,
    run_context,
)
from tests.support.waiting import wait_until

from .hosts import WORKSPACE, HostHandler, bridge, spawn_runtime

pytestmark = pytest.mark.anyio


async def _plugins(host: HostHandler) -> list[dict[str, Any]]:
    with host.installation_scope(bridge()):
        result = await host.call_action(LangBotToRuntimeAction.LIST_PLUGINS, {}, timeout=30)
    return result["plugins"]


async def _command(host: HostHandler, text: str) -> list[dict[str, Any]]:
    with host.installation_scope(bridge()):
        return [
            item
            async for item in host.call_action_generator(
                LangBotToRuntimeAction.EXECUTE_COMMAND,
                {"command_context": command_context(text), "include_plugins": None},
                timeout=60,
            )
        ]


async def test_a_host_handler_drives_a_debug_plugin_through_lbp_rt_over_stdio(
    tmp_path: Path,
) -> None:
    plugin = copy_plugin(ECHO_PLUGIN, tmp_path / "echo")
    async with spawn_runtime(tmp_path) as (host, controller, debug_port):
        assert controller.process is not None
        info = await host.call_action(
            LangBotToRuntimeAction.GET_DEBUG_INFO, {}, timeout=30, action_context=WORKSPACE
        )
        url = f"ws://127.0.0.1:{debug_port}/plugin/debug/ws"
        async with lbp_run(plugin, url, info["plugin_debug_key"]):

            async def listed() -> bool:
                return [
                    p["manifest"]["manifest"]["metadata"]["name"] for p in await _plugins(host)
                ] == ["echoplug"]

            await wait_until(listed)
            # the runtime asked the host (this handler) for the debug plugin's settings,
            # under the workspace the runtime was addressed with
            settings = [ctx for kind, ctx, _ in host.seen if kind == "settings"]
            assert settings
            assert all(
                c is not None and c.workspace_uuid == WORKSPACE.workspace_uuid for c in settings
            )

            assert [r["text"] for r in await _command(host, "hello bob")] == ["hello, bob"]
            # plugin -> runtime -> this handler's invoke_llm -> back: a call served by @action
            ask = await _command(host, "ask what is 2+2")
            assert [r["text"] for r in ask] == ["LLM said: FAKE-LLM: what is 2+2"]
            _kind, context, data = next(s for s in host.seen if s[0] == "invoke_llm")
            assert data["caller_plugin_identity"] == "tester/echoplug"
            assert context is not None
            assert context.workspace_uuid == WORKSPACE.workspace_uuid
            # an ActionResponse.error of the host reaches the plugin as an error, which
            # ends its command with that error
            with pytest.raises(ActionCallError, match="model quota exceeded"):
                await _command(host, "ask refuse")

            with host.installation_scope(bridge()):
                items = [
                    i
                    async for i in host.call_action_generator(
                        LangBotToRuntimeAction.RUN_RUNNER,
                        {
                            "plugin_author": "tester",
                            "plugin_name": "echoplug",
                            "runner_name": "echo",
                            "context": run_context("hi there"),
                        },
                        timeout=60,
                    )
                ]
            assert items[-1]["type"] == "run.completed"
            assert items[-1]["data"]["message"]["content"] == "echo-runner: hi there"
        process = controller.process
    # leaving closed the link: the controller stopped the runtime in order
    assert controller.process is None
    assert process.returncode is not None


async def test_call_errors_come_back_as_the_host_library_classes(tmp_path: Path) -> None:
    async with spawn_runtime(tmp_path) as (host, _, _):
        with pytest.raises(ActionCallError) as refused:
            await host.call_action(LangBotToRuntimeAction.PAGE_API, {}, timeout=30)
        # the typed error the runtime sent is kept as the cause
        assert isinstance(refused.value.__cause__, Exception)
        with pytest.raises(ActionCallError) as unknown:
            await host.call_action("no_such_action", {}, timeout=30)
        assert isinstance(unknown.value.__cause__, ActionNotFoundError)
        assert "no_such_action" in unknown.value.message
        with pytest.raises(ActionCallTimeoutError):
            await host.call_action(CommonAction.PING, {}, timeout=0)
        # the link is still fine after all three
        assert await host.call_action(CommonAction.PING, {}, timeout=30) == {"message": "pong"}


async def test_a_runtime_that_dies_ends_run_and_fails_pending_calls(tmp_path: Path) -> None:
    async with spawn_runtime(tmp_path) as (host, controller, _):
        assert controller.process is not None
        controller.process.kill()
        with anyio.fail_after(30):
            await host.disconnected.wait()
        with pytest.raises(ConnectionClosedError):
            await host.call_action(CommonAction.PING, {}, timeout=30)


async def test_the_ws_controller_dials_lbp_rt_with_its_token(tmp_path: Path) -> None:
    token = "t" * 40
    with pytest.MonkeyPatch.context() as env:
        env.setenv("LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN", token)
        runtime_cm = lbp_rt(tmp_path)
        async with runtime_cm as runtime:
            failures: list[Exception | None] = []
            answers: list[dict[str, Any]] = []

            async def failed(_: Controller, exc: Exception | None) -> None:
                failures.append(exc)

            async def connected(connection: Connection) -> None:
                handler = Handler(connection)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(handler.run)
                    answers.append(await handler.call_action(CommonAction.PING, {}, timeout=30))
                    await handler.close()

            good = WebSocketClientController(
                runtime.control_url, failed, {PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER: token}
            )
            with anyio.fail_after(30):
                await good.run(connected)
            assert answers == [{"message": "pong"}]
            assert failures == []

            # a wrong token is refused at the handshake: the failed callback hears of it
            bad = WebSocketClientController(
                runtime.control_url, failed, {PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER: "x" * 40}
            )
            with anyio.fail_after(30):
                await bad.run(connected)
            assert len(failures) == 1
            assert failures[0] is not None
            assert answers == [{"message": "pong"}]


async def test_the_ws_controller_reports_a_runtime_that_is_not_there() -> None:
    failures: list[Exception | None] = []

    async def failed(_: Controller, exc: Exception | None) -> None:
        failures.append(exc)

    async def connected(connection: Connection) -> None:
        raise AssertionError("nothing listens there")

    controller = WebSocketClientController(f"ws://127.0.0.1:{free_port()}/control/ws", failed)
    with anyio.fail_after(30):
        await controller.run(connected)
    assert len(failures) == 1
    assert isinstance(failures[0], OSError)
