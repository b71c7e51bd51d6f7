"""The host's stdio entry point: ``python -m langbot_plugin.cli.__init__ rt -s`` as a real child."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.rpc.transport_stdio import stdio_transport
from tests.conftest import free_port
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio


async def test_stdio_runtime_serves_the_handshake_and_exits_when_stdin_closes(
    tmp_path: Path,
) -> None:
    command = [
        sys.executable,
        "-m",
        "langbot_plugin.cli.__init__",
        "rt",
        "-s",
        "--ws-debug-port",
        str(free_port()),
        "--data-dir",
        str(tmp_path),
    ]
    process = await anyio.open_process(command, stderr=subprocess.PIPE)
    assert process.stdin is not None
    assert process.stdout is not None
    try:
        async with (
            stdio_transport(process.stdout, process.stdin) as transport,
            PluginRuntimeClient.over(transport, LocalHost()) as host,
        ):
            assert await host.list_plugins() == []
            key = await host.get_debug_key()
            assert len(key) >= 32
            big = "x" * 100_000  # crosses the 16 KiB framing threshold both ways
            assert await host.session.call("__ping", {"pad": big}) == {"message": "pong"}
        with anyio.fail_after(PATIENCE):
            code = await process.wait()
        assert code == 0
    finally:
        if process.returncode is None:
            process.kill()
        await process.aclose()
