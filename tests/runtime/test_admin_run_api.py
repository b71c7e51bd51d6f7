"""The admin run API end to end: a plugin's ``AgentRunAdminAPIProxy`` through a real
``lbp rt`` (which forwards the calls without a run, stamping the caller's identity) to
the host library, which serves them to the plugins it names as admins only."""

from __future__ import annotations

from typing import Any

import pytest

from langbot_plugin.api.entities.builtin.agent_runner import AgentAPIException, AgentRunResult
from langbot_plugin.api.proxies.runner.admin import RunnerAdminAPIProxy
from langbot_plugin.host import LocalHost
from langbot_plugin.host.run_host import RunHost
from langbot_plugin.protocol.host_api.run_ledger import RuntimeListParams
from langbot_plugin.stack import host_here
from tests.runtime.peers import ScriptedPlugin, running_runtime

pytestmark = pytest.mark.anyio

ADMIN = {"tester/echoplug": ["agent_run:admin", "runtime:admin"]}


async def runners(include_plugins: list[str] | None) -> list[dict[str, Any]]:
    return [{"runner_id": "plugin:tester/echoplug/echo", "include": include_plugins}]


async def test_an_admin_plugin_reaches_every_run_and_the_runtime_registry() -> None:
    local = LocalHost(runs=RunHost(admins=ADMIN, runners=runners))
    async with (
        running_runtime() as runtime,
        host_here(runtime, local) as host,
    ):
        key = await host.get_debug_key()
        started = await local.start_run("someone/else", "agent", "hi")  # another plugin's run
        async with ScriptedPlugin().connected(runtime, key) as session:
            admin = RunnerAdminAPIProxy(session)
            run = await admin.run_get(started.run_id)
            assert (run.run_id, run.status) == (started.run_id, "running")
            page = await admin.run_list(statuses=["running"], limit=10)
            assert [r.run_id for r in page.items] == [started.run_id]
            events = await admin.run_events_page(started.run_id)
            assert events.items == []
            cancelled = await admin.run_cancel(started.run_id, reason="operator")
            assert cancelled.run_id == started.run_id

            registered = await admin.runtime_register(
                "rt-1", display_name="Runtime 1", labels={"region": "local"}
            )
            assert (registered.runtime_id, registered.status) == ("rt-1", "online")
            beat = await admin.runtime_heartbeat("rt-1", metadata={"load": 1})
            assert beat.metadata == {"load": 1}
            listed = await admin.runtime_list(labels={"region": "local"})
            assert [r.runtime_id for r in listed.items] == ["rt-1"]
            assert (await admin.runtime_list(labels={"region": "far"})).items == []
            assert (await admin.runtime_stats()).online_count == 1
            reconciled = await admin.runtime_reconcile(stale_after_seconds=3600)
            assert reconciled["stale_count"] == 0

            stats = await admin.run_stats()
            assert stats.total_count == 1
            per_runner = await admin.runner_stats()
            assert [r.runner_id for r in per_runner.items] == [started.session.runner_id]
            assert await admin.runner_list(include_plugins=["tester/echoplug"]) == [
                {"runner_id": "plugin:tester/echoplug/echo", "include": ["tester/echoplug"]}
            ]

            # this host queues no run for external runtimes: nothing to claim
            with pytest.raises(AgentAPIException) as no_queue:
                await admin.run_claim("rt-1")
            assert no_queue.value.code == "not_found"
            with pytest.raises(AgentAPIException) as no_claim:
                await admin.run_release_claim(started.run_id, "rt-1", "token")
            assert no_claim.value.code == "not_found"
            result = AgentRunResult.processor_log(started.run_id, "x")
            with pytest.raises(AgentAPIException) as unserved:
                await admin.run_append_result(result)
            assert unserved.value.code == "not_supported"


async def test_a_plugin_the_host_does_not_name_is_refused() -> None:
    local = LocalHost(runs=RunHost(admins=ADMIN))
    async with (
        running_runtime() as runtime,
        host_here(runtime, local) as host,
    ):
        key = await host.get_debug_key()
        started = await local.start_run("tester/echoplug", "echo", "hi")
        async with ScriptedPlugin(name="intruder").connected(runtime, key) as session:
            admin = RunnerAdminAPIProxy(session)
            for call in (
                admin.run_get(started.run_id),
                admin.run_list(),
                admin.runtime_register("rt-1"),
                admin.runtime_list(),
                admin.run_stats(),
                admin.runner_list(),
            ):
                with pytest.raises(AgentAPIException) as refused:
                    await call
                assert refused.value.code.startswith(("permission_denied", "run_not_live"))
    listed = local.runs.services.runtimes.page(RuntimeListParams())
    assert listed.total_count == 0  # the refused register changed nothing
