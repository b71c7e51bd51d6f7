"""A run the host cancels stops its runner (the generator is closed) and ends cancelled."""

from __future__ import annotations

from pathlib import Path

import anyio
import pytest

from langbot_plugin.host import LocalHost
from tests.e2e.processes import host_for, lbp_rt, wait_until
from tests.support.pypi import package

pytestmark = pytest.mark.anyio

PROBE = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "probe"


async def test_host_cancel_closes_the_runner_and_reports_cancelled(tmp_path: Path) -> None:
    local = LocalHost()
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        binding, result = await host.install_package(package(PROBE))
        assert result.state == "running"
        started = await local.start_run("tester/probe", "sleepy", "wake up", timeout=600)
        run_id = started.context["run_id"]
        delivered = anyio.Event()

        def on_result(item: object) -> None:
            delivered.set()

        outcome_box: list[object] = []
        async with anyio.create_task_group() as tg:

            async def drive() -> None:
                items = host.run_runner("tester", "probe", "sleepy", started.context, scope=binding)
                outcome_box.append(await local.runs.drive(started, items, on_result=on_result))

            tg.start_soon(drive)
            await delivered.wait()  # the runner is now parked inside its sleep
            local.runs.cancel(run_id, "user pressed stop")

        outcome = outcome_box[0]
        assert outcome.status == "cancelled"  # type: ignore[attr-defined]
        assert outcome.error["code"] == "cancelled"  # type: ignore[attr-defined,index]

        async def runner_closed() -> bool:
            lines = await host.get_plugin_logs("tester", "probe", scope=binding)
            return any(f"sleepy run {run_id} closed" in line["text"] for line in lines)

        await wait_until(runner_closed)
