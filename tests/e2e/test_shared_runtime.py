"""``execution_mode: shared-runtime-v1`` under a real ``lbp rt``: several installed plugins
in one worker process, each with its own modules, storage and API identity; a plugin
that fails (at load, in a background task, or by ending the process) is reported and
the others keep serving."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import RPCError
from tests.e2e.processes import (
    host_for,
    lbp_rt,
    parent_pid,
    template_pids,
    wait_until,
    worker_pids,
)
from tests.support.metrics import scrape
from tests.support.pypi import package
from tests.support.slot_plugins import write_slot_plugin
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio

SHARED = "shared-runtime-v1"


async def _install(host: PluginRuntimeClient, folder: Path) -> ActionScope:
    binding, result = await host.install_package(package(folder), execution_mode=SHARED)
    assert (result.state, result.message) == ("running", None)
    return binding


async def _whoami(host: PluginRuntimeClient, binding: ActionScope, **params: Any) -> Any:
    return await host.call_tool("whoami", params, scope=binding)


async def test_two_plugins_share_one_process_and_nothing_else(tmp_path: Path) -> None:
    local = LocalHost()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        alpha = await _install(host, write_slot_plugin(tmp_path, "alpha"))
        beta = await _install(host, write_slot_plugin(tmp_path, "beta"))

        a, b = await _whoami(host, alpha), await _whoami(host, beta)
        assert a["pid"] == b["pid"]  # one worker process
        # each plugin's `import utils` is its own module, under its own prefix
        assert (a["tag"], b["tag"]) == ("alpha", "beta")
        assert a["module"] != b["module"]
        assert a["module"].startswith("lbp_slot_")
        assert a["module"].endswith(".utils")
        # module state is per plugin
        await _whoami(host, alpha)
        assert (await _whoami(host, alpha))["count"] == 3
        assert (await _whoami(host, beta))["count"] == 2
        # a module first imported while serving a call is the calling plugin's
        assert (await _whoami(host, beta, do="lazy"))["lazy"] == "beta"
        assert (await _whoami(host, alpha, do="lazy"))["lazy"] == "alpha"

        # storage is per plugin: the host sees each call under its own installation
        await _whoami(host, alpha, do="store")
        await _whoami(host, beta, do="store")
        assert (await _whoami(host, alpha, do="load"))["stored"] == "alpha"
        assert (await _whoami(host, beta, do="load"))["stored"] == "beta"
        stores = local.calls_of("set_binary_storage")
        owners = {call.data["owner"]: call.context for call in stores}
        assert owners == {"tester/alpha": alpha.as_context(), "tester/beta": beta.as_context()}

        plugins = await host.list_plugins(alpha)
        assert [(p.identity, p.status) for p in plugins] == [("tester/alpha", "initialized")]

        # removing one leaves the other serving in the same process
        await host.remove_installation(alpha)
        assert (await _whoami(host, beta))["pid"] == b["pid"]
        with pytest.raises(RPCError):
            await _whoami(host, alpha)


async def test_a_failing_plugin_is_reported_and_the_others_keep_serving(tmp_path: Path) -> None:
    async with lbp_rt(tmp_path) as runtime, host_for(runtime) as host:
        good = await _install(host, write_slot_plugin(tmp_path, "good"))
        pid = (await _whoami(host, good))["pid"]

        bad = write_slot_plugin(tmp_path, "bad", on_load="raise RuntimeError('bad at load')")
        binding, result = await host.install_package(package(bad), execution_mode=SHARED)
        assert (result.state, result.error_code) == ("failed", "slot_attach_failed")
        assert "bad at load" in (result.message or "")
        assert await host.list_plugins(binding) == []
        assert (await _whoami(host, good))["pid"] == pid  # same process, still serving

        # a background task that dies is logged under its plugin at once
        await _whoami(host, good, do="task")

        async def logged() -> bool:
            lines = await host.get_plugin_logs("tester", "good", scope=good)
            return any("background task died" in line["text"] for line in lines)

        await wait_until(logged)
        assert (await _whoami(host, good))["count"] == 4


@pytest.mark.parametrize(
    "start",
    # unconfined, the shared worker is forked from the worker template (issue 22)
    [pytest.param((), id="default"), pytest.param(("--confine", "off"), id="forked")],
)
async def test_a_plugin_ending_the_process_brings_every_slot_back(
    tmp_path: Path, start: tuple[str, ...]
) -> None:
    async with lbp_rt(tmp_path, *start) as runtime, host_for(runtime) as host:
        one = await _install(host, write_slot_plugin(tmp_path, "one"))
        two = await _install(host, write_slot_plugin(tmp_path, "two"))
        pid = (await _whoami(host, two))["pid"]
        templates = template_pids(runtime.process.pid)
        if start:
            [worker] = worker_pids(runtime.process.pid)
            assert [parent_pid(worker)] == templates

        with anyio.fail_after(PATIENCE), pytest.raises(RPCError):
            await _whoami(host, one, do="exit")

        async def back(binding: ActionScope) -> bool:
            try:
                return (await _whoami(host, binding))["pid"] != pid
            except RPCError:
                return False

        await wait_until(lambda: back(two))
        await wait_until(lambda: back(one))
        if start:  # back through the same template
            [worker] = worker_pids(runtime.process.pid)
            assert [parent_pid(worker)] == templates
        lines = await host.get_plugin_logs("tester", "two", scope=two)
        assert any("shared worker exited" in line["text"] for line in lines)
        metrics = await scrape(f"http://127.0.0.1:{runtime.debug_port}/metrics")
        assert metrics.value("lbp_rt_plugin_worker_restarts_total", worker="shared") == 1
        assert metrics.value("lbp_rt_plugin_workers", mode="shared") == 1
        assert metrics.value("lbp_rt_plugin_workers", mode="dedicated") == 0
