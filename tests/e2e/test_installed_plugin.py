"""Installed plugins under a real ``lbp rt``: packages sent as the host sends them, workers
supervised, dependencies installed, logs captured, state kept across restarts."""

from __future__ import annotations

import hashlib
from pathlib import Path

import anyio
import pytest

from langbot_plugin.host import LocalHost, ScriptedModel
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import RPCError
from tests.conftest import free_port
from tests.e2e.processes import (
    ECHO_PLUGIN,
    command_context,
    host_for,
    lbp_rt,
    run_context,
    wait_until,
    worker_pids,
)
from tests.support.pypi import local_index, package
from tests.support.waiting import PATIENCE
from tests.support.zips import patch_central

pytestmark = pytest.mark.anyio

PROBE = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "probe"


async def test_install_run_log_restart_remove(tmp_path: Path) -> None:
    local = LocalHost(models={"m1": ScriptedModel(lambda msgs: f"FAKE-LLM: {msgs[-1]['content']}")})
    ports = (free_port(), free_port())
    content = package(ECHO_PLUGIN)
    async with lbp_rt(tmp_path, ports=ports) as runtime, host_for(runtime, local) as host:
        binding, result = await host.install_package(content)
        assert (result.installation_uuid, result.state) == (binding.installation_uuid, "running")
        assert binding.artifact_digest == hashlib.sha256(content).hexdigest()

        plugins = await host.list_plugins(binding)
        assert [(p.identity, p.debug, p.status) for p in plugins] == [
            ("tester/echoplug", False, "initialized")
        ]
        assert await host.list_plugins() == []  # not under the bridge: that is for debug plugins

        items = [
            i
            async for i in host.run_runner(
                "tester", "echoplug", "echo", run_context("hi", "r1"), scope=binding
            )
        ]
        assert items[-1]["data"]["message"]["content"] == "echo-runner: hi"
        replies = await host.execute_command(command_context("ask 2+2"), scope=binding)
        assert [r["text"] for r in replies] == ["LLM said: FAKE-LLM: 2+2"]
        call = local.calls_of("invoke_llm")[-1]
        assert call.context == binding.as_context()  # the full binding, as the host requires

        logs = await host.get_plugin_logs("tester", "echoplug", scope=binding)
        assert any("initialized" in line["text"] for line in logs)

        # an unchanged package is not unpacked a second time
        artifacts = sorted(p.name for p in (runtime.data / "artifacts").iterdir())
        assert artifacts == [binding.artifact_digest]

    # a restarted runtime brings the installation back on the host's reconcile
    async with lbp_rt(tmp_path, ports=ports) as runtime, host_for(runtime, local) as host:
        assert binding.installation_uuid is not None
        reconciled = await host.reconcile([binding])
        assert reconciled.applied == [binding.installation_uuid]
        assert reconciled.missing_artifacts == []
        assert [p.identity for p in await host.list_plugins(binding)] == ["tester/echoplug"]
        await host.remove_installation(binding)
        assert await host.list_plugins(binding) == []
        unknown = host.binding_for("a-new-installation", "0" * 64)
        assert (await host.reconcile([binding, unknown])).missing_artifacts == [
            binding.installation_uuid,
            "a-new-installation",
        ]


async def test_worker_crash_fails_the_call_and_the_worker_comes_back(tmp_path: Path) -> None:
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        binding, result = await host.install_package(package(PROBE))
        assert result.state == "running"
        pid = (await host.execute_command(command_context("probe pid"), scope=binding))[0]["text"]

        with anyio.fail_after(PATIENCE), pytest.raises(Exception) as info:  # noqa: PT011 - any transport error
            await host.execute_command(command_context("probe crash"), scope=binding)
        assert "connection" in str(info.value).lower() or "closed" in str(info.value).lower()

        async def restarted() -> bool:
            try:  # while the worker restarts the plugin is briefly absent: not found
                replies = await host.execute_command(command_context("probe pid"), scope=binding)
            except RPCError:
                return False
            return replies[0]["text"] != pid

        await wait_until(restarted)


async def test_a_running_call_fails_at_once_when_the_worker_is_killed(tmp_path: Path) -> None:
    import os
    import signal

    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        binding, _ = await host.install_package(package(PROBE))
        [pid] = worker_pids(runtime.process.pid)
        items: list[dict[str, object]] = []
        with anyio.fail_after(PATIENCE):
            async for item in host.run_runner(
                "tester", "probe", "sleepy", run_context("x", "r2"), scope=binding
            ):
                items.append(item)
                if len(items) == 1:
                    os.kill(pid, signal.SIGKILL)
        assert items[-1]["type"] == "run.failed"
        assert items[-1]["data"]["code"] == "runner.forward_exception"  # type: ignore[index]


async def test_logs_keep_levels_and_prints(tmp_path: Path) -> None:
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        binding, _ = await host.install_package(package(PROBE))
        await host.execute_command(command_context("probe log"), scope=binding)

        async def logged() -> bool:
            texts = [
                line["text"]
                for line in await host.get_plugin_logs("tester", "probe", scope=binding)
            ]
            return any("a printed line" in t for t in texts)

        await wait_until(logged)
        everything = await host.get_plugin_logs("tester", "probe", scope=binding)
        levels = {line["level"] for line in everything}
        assert {"INFO", "WARNING", "ERROR"} <= levels
        warnings = await host.get_plugin_logs("tester", "probe", scope=binding, level="WARNING")
        assert [line["text"] for line in warnings] == [
            "probe: a warning line",
            "probe: an error line",
        ]
        assert len(await host.get_plugin_logs("tester", "probe", scope=binding, limit=2)) == 2


@pytest.mark.timeout(180)  # pip installs into a new environment
async def test_dependency_is_installed_into_the_workers_environment(tmp_path: Path) -> None:
    with local_index(tmp_path / "index") as index:
        extra = {"requirements.txt": b"lbp-probe-dep==1.0\nlangbot-plugin\n"}
        async with (
            lbp_rt(
                tmp_path, "--pypi-index-url", index, "--pypi-trusted-host", "127.0.0.1"
            ) as runtime,
            host_for(runtime) as host,
        ):
            binding, result = await host.install_package(package(PROBE, extra))
            assert result.state == "running", result.message
            replies = await host.execute_command(command_context("probe dep"), scope=binding)
            assert [r["text"] for r in replies] == ["dep says 42"]


@pytest.mark.timeout(180)  # pip creates an environment before it fails
async def test_failed_dependency_reports_pips_message_and_keeps_nothing_running(
    tmp_path: Path,
) -> None:
    with local_index(tmp_path / "index") as index:
        extra = {"requirements.txt": b"lbp-not-published==1.0\n"}
        async with (
            lbp_rt(tmp_path, "--pypi-index-url", index) as runtime,
            host_for(runtime) as host,
        ):
            binding, result = await host.install_package(package(PROBE, extra))
            assert result.state == "failed"
            assert result.error_code == "dependency_install_failed"
            assert "lbp-not-published" in (result.message or "")
            assert await host.list_plugins(binding) == []


async def test_hostile_and_mismatched_packages_are_refused(tmp_path: Path) -> None:
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        # Packages are unpacked in <data>/artifacts/.staging-*/, so this entry would land
        # in <data>/escape.py.
        evil = package(PROBE, {"../../escape.py": b"print('owned')"})
        landing = runtime.data / "escape.py"
        binding, result = await host.install_package(evil)
        assert not landing.exists()
        assert (result.state, result.error_code) == ("failed", "artifact_invalid")
        assert [p.name for p in (runtime.data / "artifacts").iterdir()] == []
        # a damaged entry is the package's fault, not an internal error
        good = package(PROBE)
        damaged = patch_central(good, "main.py", crc=0x12345678)
        _, result = await host.install_package(damaged)
        assert (result.state, result.error_code) == ("failed", "artifact_invalid")
        assert "corrupt entry" in (result.message or "")
        # a package whose bytes do not match the binding's digest
        key = await host.session.send_file(good, suffix="lbpkg", context=binding.as_context())
        wrong: ActionScope = binding.model_copy(update={"artifact_digest": "f" * 64})
        from langbot_plugin.protocol import control_link as ctl

        result = await ctl.APPLY_PLUGIN_INSTALLATION.call(
            host.session, {"artifact_file_key": key}, context=wrong.as_context()
        )
        assert (result.state, result.error_code) == ("failed", "artifact_invalid")
        assert "digest" in (result.message or "")
