"""A misspelled kind is never dropped silently: the install path refuses the package with
``plugin_invalid``, ``lbp run`` refuses the folder, and a debug plugin registered by
another SDK gets its unknown component named in the runtime's log."""

from __future__ import annotations

import logging
import os
import shutil
import sys
from pathlib import Path

import anyio
import pytest

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from tests.e2e.processes import ECHO_PLUGIN, host_for, lbp_rt
from tests.runtime.peers import ScriptedPlugin, component, running_runtime
from tests.support.pypi import package

pytestmark = pytest.mark.anyio


def broken_echo(target: Path) -> Path:
    plugin = Path(shutil.copytree(ECHO_PLUGIN, target))
    manifest = plugin / "components" / "commands" / "hello.yaml"
    manifest.write_text(manifest.read_text().replace("kind: Command", "kind: Comand"))
    return plugin


async def test_the_runtime_refuses_to_install_a_misspelled_kind(tmp_path: Path) -> None:
    content = package(broken_echo(tmp_path / "echo"))
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        binding, result = await host.install_package(content)
        assert result.state == "failed"
        assert result.error_code == "plugin_invalid"
        assert result.message is not None
        assert (
            "components/commands/hello.yaml:2: unknown kind 'Comand' (did you mean 'Command'?)"
            in result.message
        )
        assert await host.list_plugins(binding) == []


async def test_lbp_run_refuses_a_misspelled_kind_in_one_line(tmp_path: Path) -> None:
    plugin = broken_echo(tmp_path / "echo")
    env = {**os.environ, "PLUGIN_DEBUG_KEY": "k" * 40}
    with anyio.fail_after(60):  # it must refuse, not start connecting
        done = await anyio.run_process(
            [sys.executable, "-m", "langbot_plugin.cli.__init__", "run"],
            cwd=plugin,
            env=env,
            check=False,
        )
    assert done.returncode == 2
    assert done.stderr.decode() == (
        "lbp run: components/commands/hello.yaml:2: unknown kind 'Comand' "
        "(did you mean 'Command'?)\n"
    )


async def test_a_foreign_debug_plugins_unknown_kind_is_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    plugin = ScriptedPlugin()
    plugin.container["components"].append(
        {"manifest": component("Toool", "typo"), "component_config": {}}
    )
    async with running_runtime() as runtime:
        url = f"ws://127.0.0.1:{runtime.options.control_port}/control/ws"
        async with PluginRuntimeClient.connect(url, LocalHost()) as host:
            key = await host.get_debug_key()
            with caplog.at_level(logging.WARNING, logger="langbot_plugin.runtime.link"):
                async with plugin.connected(runtime, key):
                    pass
    warnings = [r.getMessage() for r in caplog.records]
    assert any(
        "debug plugin tester/echoplug: components/toool/typo.yaml: kind 'Toool'" in line
        and "LangBot will not see it" in line
        for line in warnings
    ), warnings
