"""``/metrics`` of a real ``lbp rt``: a known workload, scraped over HTTP, parsed with
Prometheus' own parser, shows exactly the counts the workload made."""

from __future__ import annotations

import os
from pathlib import Path

import anyio
import pytest

from langbot_plugin.host import LocalHost, ScriptedModel
from langbot_plugin.rpc import InvalidParamsError, RPCError
from langbot_plugin.runtime.security import PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER
from tests.e2e.processes import ECHO_PLUGIN, Runtime, command_context, host_for, lbp_rt, wait_until
from tests.support.metrics import Scrape, fetch, scrape
from tests.support.pypi import package
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio

PROBE = Path(__file__).resolve().parent.parent / "fixtures" / "plugins" / "probe"
REQUESTS = "lbp_rt_requests_total"


def _url(runtime: Runtime, port: int | None = None) -> str:
    return f"http://127.0.0.1:{port or runtime.debug_port}/metrics"


async def test_a_workload_shows_in_the_runtimes_metrics(tmp_path: Path) -> None:
    local = LocalHost(models={"m1": ScriptedModel(lambda msgs: "FAKE-LLM")})
    async with lbp_rt(tmp_path) as runtime, host_for(runtime, local) as host:
        binding, result = await host.install_package(package(PROBE))
        assert result.state == "running"
        echo, result = await host.install_package(package(ECHO_PLUGIN))
        assert result.state == "running"
        # the plugin asks the runtime (link "plugin"), which asks the host
        replies = await host.execute_command(command_context("ask 2+2"), scope=echo)
        assert [r["text"] for r in replies] == ["LLM said: FAKE-LLM"]
        for _ in range(2):
            await host.execute_command(command_context("probe pid"), scope=binding)
        with pytest.raises(InvalidParamsError):
            await host.session.call("get_plugin_info", {"plugin_identity": 7})
        with anyio.fail_after(PATIENCE), pytest.raises(RPCError):  # the worker exits
            await host.execute_command(command_context("probe crash"), scope=binding)

        async def restarted() -> bool:
            now = await scrape(_url(runtime))
            return (
                now.value("lbp_rt_plugin_worker_restarts_total", worker="tester/probe") == 1
                and now.value("lbp_rt_plugins", status="initialized") == 2
            )

        await wait_until(restarted)
        await host.execute_command(command_context("probe pid"), scope=binding)

        metrics = await scrape(_url(runtime))
        assert metrics.content_type.startswith("text/plain; version=0.0.4")
        control = {"link": "control", "action": "execute_command"}
        # 3 probe pid and the ask; the crash counted with its error code
        assert metrics.outcomes(REQUESTS, **control) == {"ok": 4, "connection_closed": 1}
        assert metrics.value("lbp_rt_request_duration_seconds_count", **control) == 5
        assert metrics.value("lbp_rt_requests_in_flight", **control) == 0
        bad = {"link": "control", "action": "get_plugin_info"}
        assert metrics.outcomes(REQUESTS, **bad) == {"invalid_params": 1}
        # what the echo plugin's worker asked the runtime
        assert metrics.outcomes(REQUESTS, link="plugin", action="invoke_llm") == {"ok": 1}
        assert metrics.value("lbp_rt_plugins", status="initialized") == 2
        assert metrics.value("lbp_rt_plugin_workers", mode="dedicated") == 2
        assert metrics.value("lbp_rt_plugin_workers", mode="shared") == 0
        assert metrics.value("lbp_rt_plugin_calls_in_flight") == 0
        assert metrics.value("lbp_rt_stuck_calls_total") == 0
        # the control port answers the same
        again = await scrape(_url(runtime, runtime.control_port))
        assert (
            again.value(
                REQUESTS, link="control", action="get_plugin_info", outcome="invalid_params"
            )
            == 1
        )


async def test_metrics_need_the_token_when_one_is_presented(tmp_path: Path) -> None:
    token = "m" * 40
    env = {**os.environ, "LANGBOT_PLUGIN_RUNTIME_CONTROL_TOKEN": token}
    async with lbp_rt(tmp_path, env=env) as runtime:
        wrong = {PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER: "x" * 40}
        status, body, _ = await anyio.to_thread.run_sync(lambda: fetch(_url(runtime), wrong))
        assert (status, body) == (
            401,
            f"/metrics: wrong {PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER}\n",  # not "missing"
        )
        right = {PLUGIN_RUNTIME_CONTROL_TOKEN_HEADER: token}
        metrics: Scrape = await scrape(_url(runtime), right)
        assert metrics.value("lbp_rt_live_runs") == 0
        assert (await scrape(_url(runtime))).value("lbp_rt_live_runs") == 0  # loopback
