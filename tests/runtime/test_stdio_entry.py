"""The host's stdio entry point: ``python -m langbot_plugin.cli.__init__ rt -s`` as a real child."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from langbot_plugin.host import LocalHost
from langbot_plugin.stack import start_runtime
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio


async def test_stdio_runtime_serves_the_handshake_and_exits_when_stdin_closes(
    tmp_path: Path,
) -> None:
    async with start_runtime(data_dir=tmp_path, stdio=True) as runtime:
        async with runtime.host(LocalHost()) as host:
            assert await host.list_plugins() == []
            key = await host.get_debug_key()
            assert len(key) >= 32
            big = "x" * 100_000  # crosses the 16 KiB framing threshold both ways
            assert await host.session.call("__ping", {"pad": big}) == {"message": "pong"}
        with anyio.fail_after(PATIENCE):  # its stdin closed with the link: it stops by itself
            code = await runtime.process.wait()
        assert code == 0
