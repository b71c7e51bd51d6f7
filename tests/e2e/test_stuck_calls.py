"""A plugin call nobody answers shows up: one log line, a count, and ``lbp rt status``.

Real ``lbp rt`` (JSON logs, a small ``--stuck-call-sec``) and ``lbp run`` processes; a
command of the plugin that never answers until the host gives up.
"""

from __future__ import annotations

import json
import os
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.e2e.processes import (
    ECHO_PLUGIN,
    LBP,
    Runtime,
    command_context,
    copy_plugin,
    host_for,
    lbp_rt,
    lbp_run,
    plugin_listed,
    wait_until,
)

pytestmark = pytest.mark.anyio

THRESHOLD = 0.3

HANG_PY = """
import anyio
from langbot_plugin.api.definition.components.command.command import Command


class Hang(Command):
    def __init__(self) -> None:
        super().__init__()

        @self.subcommand("*", help="never answers")
        async def hang(self, context):
            await anyio.sleep_forever()
            yield None
"""

HANG_YAML = """apiVersion: v1
kind: Command
metadata:
  name: hang
  label:
    en_US: Hang
  description:
    en_US: Never answers
spec: null
execution:
  python:
    path: hang.py
    attr: Hang
"""


def _hanging_plugin(tmp: Path) -> Path:
    plugin = copy_plugin(ECHO_PLUGIN, tmp / "echo")
    (plugin / "components" / "commands" / "hang.py").write_text(HANG_PY)
    (plugin / "components" / "commands" / "hang.yaml").write_text(HANG_YAML)
    return plugin


def _status_cli(runtime: Runtime, *extra: str) -> subprocess.CompletedProcess[str]:
    url = f"http://127.0.0.1:{runtime.debug_port}"
    return subprocess.run(
        [*LBP, "rt", "status", "--url", url, *extra],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


async def _status(runtime: Runtime) -> dict[str, Any]:
    done = await anyio.to_thread.run_sync(lambda: _status_cli(runtime, "--json"))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def _calls(report: dict[str, Any], plugin: str) -> list[dict[str, Any]]:
    for entry in report["plugins"]:
        if entry["plugin"] == plugin:
            return entry["calls"]
    return []


def _stuck_lines(log: Path) -> list[dict[str, Any]]:
    lines = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    return [line for line in lines if "has not answered" in line["message"]]


async def test_a_stuck_call_is_logged_once_counted_and_listed(tmp_path: Path) -> None:
    plugin = _hanging_plugin(tmp_path)
    log = tmp_path / "rt.log"
    with log.open("wb") as sink:
        async with (
            lbp_rt(
                tmp_path,
                "--stuck-call-sec",
                str(THRESHOLD),
                "--log-format",
                "json",
                stderr=sink,
            ) as runtime,
            host_for(runtime) as host,
        ):
            key = await host.get_debug_key()
            async with lbp_run(plugin, runtime.debug_url, key):
                await wait_until(lambda: plugin_listed(host, "tester/echoplug"))
                assert await host.execute_command(command_context("hello bob"))  # answered
                async with anyio.create_task_group() as tg:
                    tg.start_soon(host.execute_command, command_context("hang now"))

                    async def stuck() -> bool:
                        calls = _calls(await _status(runtime), "tester/echoplug")
                        return any(c["stuck"] for c in calls)

                    await wait_until(stuck)
                    await wait_until(lambda: len(_stuck_lines(log)) == 1)

                    async def long_stuck() -> bool:
                        calls = _calls(await _status(runtime), "tester/echoplug")
                        return bool(calls) and calls[0]["waiting_sec"] >= 4 * THRESHOLD

                    await wait_until(long_stuck)  # the watcher looked again, several times
                    report = await _status(runtime)
                    (call,) = _calls(report, "tester/echoplug")
                    assert call["action"] == "execute_command"
                    assert call["stream"]
                    assert report["stuck_total"] == 1
                    assert report["inflight"] == 1
                    (line,) = _stuck_lines(log)  # logged once
                    assert line["level"] == "WARNING"
                    assert line["plugin"] == "tester/echoplug"
                    assert line["action"] == "execute_command"
                    assert line["age_sec"] >= THRESHOLD

                    printed = await anyio.to_thread.run_sync(lambda: _status_cli(runtime))
                    assert printed.returncode == 0, printed.stderr
                    assert "tester/echoplug" in printed.stdout
                    assert "execute_command (stream)" in printed.stdout
                    assert "STUCK" in printed.stdout
                    tg.cancel_scope.cancel()  # the host gives up: the call ends

                async def closed() -> bool:
                    return _calls(await _status(runtime), "tester/echoplug") == []

                await wait_until(closed)
    every = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert every
    assert all({"ts", "level", "logger", "message"} <= line.keys() for line in every)


async def test_status_refuses_a_wrong_token_and_the_cli_says_so(tmp_path: Path) -> None:
    token = "t" * 40
    env = {**os.environ, "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN": token}
    async with lbp_rt(tmp_path, env=env) as runtime:
        request = urllib.request.Request(
            f"http://127.0.0.1:{runtime.debug_port}/status",
            headers={"X-LangBot-Plugin-Runtime-Token": "x" * 40},
        )

        def fetch() -> int:
            try:
                with urllib.request.urlopen(request, timeout=30):
                    return 200
            except urllib.error.HTTPError as exc:
                return exc.code

        assert await anyio.to_thread.run_sync(fetch) == 401
        cli_env = {**os.environ, "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN": token}
        done = await anyio.to_thread.run_sync(
            lambda: subprocess.run(
                [*LBP, "rt", "status", "--url", f"http://127.0.0.1:{runtime.control_port}"],
                capture_output=True,
                text=True,
                env=cli_env,
                check=False,
                timeout=60,
            )
        )
        assert done.returncode == 0, done.stderr
        assert "plugins: 0, open calls: 0" in done.stdout
        # the control connection's own URL, path and all, names the same port
        ws_url = f"ws://127.0.0.1:{runtime.control_port}/control/ws"
        done = await anyio.to_thread.run_sync(
            lambda: subprocess.run(
                [*LBP, "rt", "status", "--url", ws_url],
                capture_output=True,
                text=True,
                env=cli_env,
                check=False,
                timeout=60,
            )
        )
        assert done.returncode == 0, done.stderr
        assert "plugins: 0, open calls: 0" in done.stdout


def test_the_cli_reports_an_unreachable_runtime_in_one_line() -> None:
    from tests.conftest import free_port

    done = subprocess.run(
        [*LBP, "rt", "status", "--url", f"http://127.0.0.1:{free_port()}"],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("lbp rt status: cannot reach lbp rt at")


async def test_lbp_box_and_lbp_run_log_json_lines(tmp_path: Path) -> None:
    from tests.conftest import free_port
    from tests.e2e.stderr_lines import child

    port = free_port()
    env = {**os.environ, "LANGBOT_BOX_CONFIG": '{"backend": "fake"}'}
    box = [*LBP, "box", "--ws-control-port", str(port), "--log-format", "json"]
    async with child(box, tmp_path, env) as (_, lines):
        index = await lines.wait_for(r"listening")
        for text in lines.lines[: index + 1]:
            entry = json.loads(text)
            assert entry["logger"].startswith("box_runtime")
    plugin = copy_plugin(ECHO_PLUGIN, tmp_path / "echo")
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        key = await host.get_debug_key()
        run_env = {
            **os.environ,
            "DEBUG_RUNTIME_WS_URL": runtime.debug_url,
            "PLUGIN_DEBUG_KEY": key,
            "LBP_LOG_FORMAT": "json",  # the environment's form of --log-format
        }
        async with child([*LBP, "run", "--no-reload"], plugin, run_env) as (_, lines):
            await wait_until(lambda: plugin_listed(host, "tester/echoplug"))
            await wait_until(lambda: bool(lines.lines))
            entries = [json.loads(text) for text in lines.lines if text.strip()]
            assert entries
            assert all({"ts", "level", "logger", "message"} <= e.keys() for e in entries)
