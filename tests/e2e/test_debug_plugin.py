"""The acceptance plugin, written with this SDK, under real ``lbp rt`` and ``lbp run`` processes."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from langbot_plugin.host import LocalHost, ScriptedModel
from tests.conftest import free_port
from tests.e2e.processes import (
    ECHO_PLUGIN,
    command_context,
    copy_plugin,
    host_for,
    lbp_rt,
    lbp_run,
    plugin_listed,
    run_context,
    wait_until,
)

pytestmark = pytest.mark.anyio


async def test_runner_commands_and_llm_through_real_processes(tmp_path: Path) -> None:
    local = LocalHost(models={"m1": ScriptedModel(lambda msgs: f"FAKE-LLM: {msgs[-1]['content']}")})
    plugin = copy_plugin(ECHO_PLUGIN, tmp_path / "echo")
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        key = await host.get_debug_key()
        async with lbp_run(plugin, runtime.debug_url, key):
            await wait_until(lambda: plugin_listed(host, "tester/echoplug"))
            runners = await host.list_runners()
            assert [r["manifest"]["id"] for r in runners] == ["plugin:tester/echoplug/echo"]

            items = [
                i
                async for i in host.run_runner(
                    "tester", "echoplug", "echo", run_context("hi there")
                )
            ]
            assert items[-1]["type"] == "run.completed"
            assert items[-1]["data"]["message"]["content"] == "echo-runner: hi there"
            assert [i["sequence"] for i in items] == list(range(1, len(items) + 1))

            hello = await host.execute_command(command_context("hello bob"))
            assert [r["text"] for r in hello] == ["hello, bob"]
            ask = await host.execute_command(command_context("ask what is 2+2"))
            assert [r["text"] for r in ask] == ["LLM said: FAKE-LLM: what is 2+2"]
            llm_call = local.calls_of("invoke_llm")[0]
            assert llm_call.data["caller_plugin_identity"] == "tester/echoplug"


async def test_lbp_run_waits_for_and_survives_runtime_restarts(tmp_path: Path) -> None:
    plugin = copy_plugin(ECHO_PLUGIN, tmp_path / "echo")
    ports = (free_port(), free_port())
    url = f"ws://127.0.0.1:{ports[1]}/plugin/debug/ws"
    async with lbp_rt(tmp_path, ports=ports) as runtime, host_for(runtime) as host:
        key = await host.get_debug_key()
    async with lbp_run(plugin, url, key) as process:  # the runtime is down: lbp run retries
        for _ in range(2):  # the key is kept in the runtime's data folder across restarts
            async with lbp_rt(tmp_path, ports=ports) as runtime, host_for(runtime) as host:
                await wait_until(lambda: plugin_listed(host, "tester/echoplug"))
        assert process.returncode is None


async def test_bad_key_exits_non_zero_with_a_clear_message(tmp_path: Path) -> None:
    plugin = copy_plugin(ECHO_PLUGIN, tmp_path / "echo")
    async with lbp_rt(tmp_path) as runtime:
        import os
        import sys

        env = {
            **os.environ,
            "DEBUG_RUNTIME_WS_URL": runtime.debug_url,
            "PLUGIN_DEBUG_KEY": "k" * 40,
        }
        done = await anyio.run_process(
            [sys.executable, "-m", "langbot_plugin.cli.__init__", "run"],
            cwd=plugin,
            env=env,
            check=False,
        )
        assert done.returncode == 1
        assert b"invalid or expired plugin debug key" in done.stderr
