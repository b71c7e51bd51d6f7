"""The host's Box client (``langbot_plugin.box``) against a real ``lbp box``, spawned over
stdio the way the released host's Box connector spawns it, and dialled over WebSocket."""

from __future__ import annotations

import json
import logging
import os
import secrets
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from langbot_plugin.box.actions import LangBotToBoxAction
from langbot_plugin.box.client import ActionRPCBoxClient
from langbot_plugin.box.errors import (
    BoxRuntimeUnavailableError,
    BoxSessionNotFoundError,
    BoxValidationError,
)
from langbot_plugin.box.models import BoxExecutionStatus, BoxSpec
from langbot_plugin.box.security import (
    BOX_CONTROL_TOKEN_ENV,
    BOX_CONTROL_TOKEN_HEADER,
    BOX_INSTANCE_HEADER,
    BOX_TRUSTED_INSTANCE_ENV,
)
from langbot_plugin.entities.io.actions.enums import CommonAction
from langbot_plugin.entities.io.context import ActionContext
from langbot_plugin.runtime.io.connection import Connection
from langbot_plugin.runtime.io.controller import Controller
from langbot_plugin.runtime.io.controllers.stdio.client import StdioClientController
from langbot_plugin.runtime.io.controllers.ws.client import WebSocketClientController
from langbot_plugin.runtime.io.handler import Handler
from tests.box.mcp_box import require, scratch_dir
from tests.conftest import free_port
from tests.e2e.processes import port_open, stop
from tests.support.waiting import wait_until

pytestmark = pytest.mark.anyio

INSTANCE = "instance-hostlib-test"
CONTEXT = ActionContext(instance_uuid=INSTANCE, workspace_uuid="ws-hostlib", placement_generation=1)


def _env(state: Path, token: str) -> dict[str, str]:
    config = {"backend": "nsjail", "state_dir": str(state / "state")}
    return {
        **os.environ,
        BOX_CONTROL_TOKEN_ENV: token,
        BOX_TRUSTED_INSTANCE_ENV: INSTANCE,
        "LANGBOT_BOX_CONFIG": json.dumps(config),
    }


@asynccontextmanager
async def stdio_box() -> AsyncGenerator[tuple[ActionRPCBoxClient, Handler]]:
    """What ``pkg/box/connector.py`` does: spawn, Handler(connection), ping, INIT, set_handler."""
    require("nsjail")
    with scratch_dir() as state:
        env = _env(state, secrets.token_urlsafe(48))
        controller = StdioClientController(
            command=sys.executable,
            args=[
                "-m",
                "langbot_plugin.cli.__init__",
                "box",
                "-s",
                "--ws-control-port",
                str(free_port()),
            ],
            env=env,
        )
        client = ActionRPCBoxClient(logger=logging.getLogger("test.box"))
        connected = anyio.Event()
        done = anyio.Event()

        async def new_connection(connection: Connection) -> None:
            handler = Handler(connection)
            client.set_handler(handler)
            async with anyio.create_task_group() as tg:
                tg.start_soon(handler.run)
                await handler.call_action(CommonAction.PING, {})
                await handler.call_action(
                    LangBotToBoxAction.INIT, json.loads(env["LANGBOT_BOX_CONFIG"])
                )
                connected.set()
                await done.wait()
                await handler.close()
            client.set_handler(None)

        async with anyio.create_task_group() as tg:
            tg.start_soon(controller.run, new_connection)
            with anyio.fail_after(60):
                await connected.wait()
            try:
                assert client.handler is not None
                yield client, client.handler
            finally:
                done.set()


async def test_the_box_client_runs_commands_and_reports_the_box_errors() -> None:
    async with stdio_box() as (client, _):
        await client.initialize()
        info = await client.get_backend_info()
        assert info["name"] == "nsjail"
        assert info["available"] is True

        result = await client.execute(
            BoxSpec(session_id="s1", cmd="echo hello-from-box", timeout_sec=30),
            action_context=CONTEXT,
        )
        assert result.status is BoxExecutionStatus.COMPLETED
        assert (result.exit_code, result.stdout) == (0, "hello-from-box\n")

        sessions = await client.get_sessions(action_context=CONTEXT)
        assert [s["session_id"] for s in sessions] == ["s1"]
        status = await client.get_status(action_context=CONTEXT)
        assert status["backend"]["name"] == "nsjail"

        # the Box's own classes, as the host catches them
        with pytest.raises(BoxSessionNotFoundError):
            await client.get_session("never-made", action_context=CONTEXT)
        with pytest.raises(BoxValidationError):
            await client.execute(
                BoxSpec(session_id="s2", cmd="true", host_path="/etc"), action_context=CONTEXT
            )
        # another workspace does not see this one's session
        other = CONTEXT.model_copy(update={"workspace_uuid": "ws-other"})
        assert await client.get_sessions(action_context=other) == []

        await client.delete_session("s1", action_context=CONTEXT)
        assert await client.get_sessions(action_context=CONTEXT) == []


async def test_the_box_client_without_a_link_is_unavailable() -> None:
    client = ActionRPCBoxClient(logger=logging.getLogger("test.box"))
    with pytest.raises(BoxRuntimeUnavailableError):
        await client.get_status()
    async with stdio_box() as (client, handler):
        await handler.close()
        with pytest.raises(BoxRuntimeUnavailableError):
            await client.get_status()


async def test_the_ws_controller_reaches_the_box_with_the_host_headers() -> None:
    require("nsjail")
    token = secrets.token_urlsafe(48)
    port = free_port()
    with scratch_dir() as state:
        process = await anyio.open_process(
            [
                sys.executable,
                "-m",
                "langbot_plugin.cli.__init__",
                "box",
                "--ws-control-port",
                str(port),
            ],
            env=_env(state, token),
            stdout=None,
            stderr=None,
        )
        try:
            await wait_until(lambda: port_open(port))
            statuses: list[dict[str, object]] = []
            failures: list[Exception | None] = []

            async def failed(_: Controller, exc: Exception | None) -> None:
                failures.append(exc)

            async def connected(connection: Connection) -> None:
                handler = Handler(connection)
                client = ActionRPCBoxClient()
                client.set_handler(handler)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(handler.run)
                    statuses.append(await client.get_status(action_context=CONTEXT))
                    await handler.close()

            url = f"ws://127.0.0.1:{port}/rpc/ws"
            headers = {BOX_INSTANCE_HEADER: INSTANCE, BOX_CONTROL_TOKEN_HEADER: token}
            with anyio.fail_after(60):
                await WebSocketClientController(url, failed, headers).run(connected)
            assert failures == []
            assert statuses[0]["backend"] is not None

            wrong = {BOX_INSTANCE_HEADER: INSTANCE, BOX_CONTROL_TOKEN_HEADER: "w" * 48}
            with anyio.fail_after(60):
                await WebSocketClientController(url, failed, wrong).run(connected)
            assert len(failures) == 1
            assert len(statuses) == 1
        finally:
            await stop(process)
