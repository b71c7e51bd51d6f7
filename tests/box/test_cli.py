"""``lbp box`` as a process: help, stdio mode as the host spawns it, startup refusals."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import aiohttp
import anyio
import pytest
from anyio.abc import Process

from box_runtime.child import BOX_COMMAND, start_box
from box_runtime.image import BASE_PACKAGES, build_commands
from langbot_plugin.cli.cmd_box import main
from langbot_plugin.rpc import PermissionDeniedError, RPCSession
from langbot_plugin.rpc.processes import free_port, wait_for_port

pytestmark = pytest.mark.anyio


def test_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--help"])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for option in ("--stdio", "--host", "--ws-control-port"):
        assert option in out


def test_importing_the_cli_loads_nothing_heavy() -> None:
    code = (
        "import sys, langbot_plugin.cli.cmd_box; "
        "print([m for m in ('aiohttp', 'docker', 'pydantic', 'anyio') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_non_loopback_without_a_token_is_refused() -> None:
    env = {k: v for k, v in os.environ.items() if k != "LANGBOT_BOX_CONTROL_TOKEN"}
    done = subprocess.run(
        [*BOX_COMMAND, "--host", "0.0.0.0", "--ws-control-port", str(free_port())],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    assert "without a control token" in done.stderr


def test_image_build_commands() -> None:
    debootstrap, importer = build_commands(
        tag="my/box:1", suite="bookworm", include=["git", "python3"], mirror="", docker="docker"
    )
    assert debootstrap[0] == "mmdebstrap"
    assert f"--include={','.join([*BASE_PACKAGES, 'git'])}" in debootstrap
    assert debootstrap[-2:] == ["bookworm", "-"]
    assert importer[:2] == ["docker", "import"]
    assert importer[-2:] == ["-", "my/box:1"]


@asynccontextmanager
async def stdio_box(
    port: int, config: dict[str, Any]
) -> AsyncGenerator[tuple[RPCSession, Process]]:
    env = {"LANGBOT_BOX_TRUSTED_INSTANCE_UUID": "inst-1", "LANGBOT_BOX_CONTROL_TOKEN": "c" * 48}
    async with (
        start_box(stdio=True, port=port, config=config, env=env) as box,
        box.client() as client,
    ):
        yield client.session, box.process


async def test_stdio_mode_as_the_host_spawns_it(tmp_path: anyio.Path) -> None:
    port = free_port()
    config = {"backend": "e2b", "state_dir": str(tmp_path)}
    async with stdio_box(port, config) as (session, process):
        await session.call("__ping", {})
        assert await session.call("box_init", {"limits": {"max_sessions": 3}}) == {
            "initialized": True
        }
        context = {"instance_uuid": "inst-1", "workspace_uuid": "w", "placement_generation": 1}
        status = await session.call("box_status", {}, context=context)
        assert status["backend"]["available"] is False
        assert "no E2B API key" in status["backend"]["reason"]
        assert status["capacity"]["limit"] == 3
        with pytest.raises(PermissionDeniedError):
            await session.call("box_status", {}, context={**context, "instance_uuid": "inst-2"})
        # the port serves the probes on loopback, with the token
        assert await wait_for_port(port, 30)
        async with aiohttp.ClientSession() as http:
            health = await http.get(f"http://127.0.0.1:{port}/healthz")
            assert (await health.json())["live"] is True
        assert process.stdin is not None
        await process.stdin.aclose()  # the host went away
        with anyio.fail_after(30):
            assert await process.wait() == 0


async def test_stdio_mode_survives_a_taken_port(tmp_path: anyio.Path) -> None:
    with socket.socket() as blocker:
        blocker.bind(("127.0.0.1", 0))
        blocker.listen()
        port = blocker.getsockname()[1]
        async with stdio_box(port, {"backend": "e2b", "state_dir": str(tmp_path)}) as (
            session,
            _,
        ):
            assert await session.call("box_get_backend_info", {}) is not None
