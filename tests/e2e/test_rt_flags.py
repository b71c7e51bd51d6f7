"""``lbp rt --debug-only`` and ``--skip-deps-check`` on real processes: what each flag
says it does, and what the runtime does without it."""

from __future__ import annotations

from pathlib import Path

import pytest

from langbot_plugin.host import LocalHost
from tests.conftest import free_port
from tests.e2e.processes import (
    ECHO_PLUGIN,
    command_context,
    copy_plugin,
    host_for,
    lbp_rt,
    lbp_run,
    plugin_listed,
    wait_until,
)
from tests.support.pypi import local_index, package

pytestmark = pytest.mark.anyio

PROBE = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "probe"


async def test_debug_only_serves_debug_plugins_and_keeps_installed_ones(tmp_path: Path) -> None:
    ports = (free_port(), free_port())
    local = LocalHost()
    async with (
        lbp_rt(tmp_path, "--debug-only", ports=ports) as runtime,
        host_for(runtime, local) as host,
    ):
        binding, result = await host.install_package(package(PROBE))
        assert (result.state, result.error_code) == ("not_started", "runtime_debug_only")
        assert "--debug-only" in (result.message or "")
        assert await host.list_plugins(binding) == []

        plugin = copy_plugin(ECHO_PLUGIN, tmp_path / "echo")
        async with lbp_run(plugin, runtime.debug_url, await host.get_debug_key()):
            await wait_until(lambda: plugin_listed(host, "tester/echoplug"))

    # without the flag, the kept installation starts on the host's reconcile
    async with lbp_rt(tmp_path, ports=ports) as runtime, host_for(runtime, local) as host:
        assert (await host.reconcile([binding])).applied == [binding.installation_uuid]
        replies = await host.execute_command(command_context("probe pid"), scope=binding)
        assert replies[0]["text"]  # a token of the worker process


@pytest.mark.timeout(180)
async def test_skip_deps_check_never_runs_pip(tmp_path: Path) -> None:
    with local_index(tmp_path / "index") as index:
        # a requirement no index has: without the flag this installation fails
        # (test_installed_plugin.test_failed_dependency_reports_pips_message...)
        extra = {"requirements.txt": b"lbp-not-published==1.0\n"}
        async with (
            lbp_rt(tmp_path, "--skip-deps-check", "--pypi-index-url", index) as runtime,
            host_for(runtime) as host,
        ):
            binding, result = await host.install_package(package(PROBE, extra))
            assert (result.state, result.message) == ("running", None)
            replies = await host.execute_command(command_context("probe pid"), scope=binding)
            assert replies[0]["text"]  # a token of the worker process
            assert not (runtime.data / "envs").exists()  # no environment was even created
            logs = await host.get_plugin_logs("tester", "probe", scope=binding)
            assert any("initialized" in line["text"] for line in logs)
