"""``/metrics`` of a real ``lbp box`` (nsjail): a known workload, scraped over HTTP,
parsed with Prometheus' own parser, shows exactly the counts the workload made."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from websockets.asyncio.client import connect
from websockets.typing import Subprotocol

from box_runtime import protocol as p
from box_runtime.child import start_box
from box_runtime.client import relay_headers, relay_url
from box_runtime.errors import BoxSessionNotFoundError, BoxValidationError
from box_runtime.server import CONTROL_TOKEN_ENV, CONTROL_TOKEN_HEADER
from tests.support.metrics import fetch, scrape
from tests.support.waiting import PATIENCE, wait_until

from .helpers import CONTEXT, jail_state, require_nsjail

pytestmark = [pytest.mark.anyio, pytest.mark.nsjail]

TOKEN = "b" * 40
REQUESTS = "lbp_box_requests_total"


@pytest.fixture
def state() -> Iterator[Path]:
    yield from jail_state("lbp-metrics-test-")


async def test_a_workload_shows_in_the_boxs_metrics(state: Path) -> None:
    require_nsjail()
    config = {"backend": "nsjail", "state_dir": str(state / "state"), "pool": {"size": 1}}
    async with (
        start_box(config=config, env={CONTROL_TOKEN_ENV: TOKEN}) as box,
        box.client(token=TOKEN) as client,
    ):
        url = f"http://127.0.0.1:{box.port}/metrics"

        async def pool_ready() -> bool:
            return (await scrape(url)).value("lbp_box_pool_ready") == 1

        await client.init({})
        await wait_until(pool_ready)
        for _ in range(2):
            assert (await client.exec(session_id="s1", cmd="echo hi")).exit_code == 0
        assert (await client.exec(session_id="s1", cmd="exit 3")).exit_code == 3
        with pytest.raises(BoxValidationError):
            await client.exec({"session_id": "s1", "cmd": "echo", "env": {"1x": ""}})
        await wait_until(pool_ready)  # refilled: s2 takes a warm sandbox too
        await client.create_session(session_id="s2")
        await client.delete_session("s2")
        with pytest.raises(BoxSessionNotFoundError):
            await client.delete_session("nothing-here")

        metrics = await scrape(url)  # from loopback: no token needed
        assert metrics.content_type == "text/plain; version=0.0.4; charset=utf-8"
        rpc = {"link": "rpc"}
        assert metrics.outcomes(REQUESTS, **rpc, action=p.BOX_EXEC.name) == {
            "ok": 3,
            "box_validation": 1,
        }
        assert metrics.outcomes(REQUESTS, **rpc, action=p.BOX_DELETE_SESSION.name) == {
            "ok": 1,
            "box_session_not_found": 1,
        }
        exec_rpc = {**rpc, "action": p.BOX_EXEC.name}
        assert metrics.value("lbp_box_request_duration_seconds_count", **exec_rpc) == 4
        assert metrics.value("lbp_box_requests_in_flight", **exec_rpc) == 0
        # an exit code is an answer, not a failure: all three completed
        assert metrics.value("lbp_box_execs_total", backend="nsjail", status="completed") == 3
        assert metrics.value("lbp_box_exec_duration_seconds_count", backend="nsjail") == 3
        assert metrics.value("lbp_box_events_total", kind="exec") == 3
        assert metrics.value("lbp_box_events_total", kind="session.create") == 2
        assert metrics.value("lbp_box_events_total", kind="session.delete") == 1
        assert metrics.value("lbp_box_sessions") == 1
        assert metrics.value("lbp_box_connections") == 1
        assert metrics.value("lbp_box_managed_processes") == 0
        # both sessions took a warm sandbox; the pool refills after each
        assert metrics.value("lbp_box_pool_adopted_total") == 2
        assert metrics.value("lbp_box_pool_target") == 1
        await wait_until(pool_ready)
        assert (await scrape(url)).value("lbp_box_pool_created_total") == 3

        wrong = {CONTROL_TOKEN_HEADER: "x" * 40}
        status, body, _ = await anyio.to_thread.run_sync(lambda: fetch(url, wrong))
        assert status == 401, body
        assert f"/metrics: wrong {CONTROL_TOKEN_HEADER}" in body  # not "needs ... beyond"
        right = await scrape(url, {CONTROL_TOKEN_HEADER: TOKEN})
        assert right.value("lbp_box_sessions") == 1


async def test_relay_frames_and_managed_processes_are_counted(state: Path) -> None:
    require_nsjail()
    config = {"backend": "nsjail", "state_dir": str(state / "state")}
    async with (
        start_box(config=config, env={CONTROL_TOKEN_ENV: TOKEN}) as box,
        box.client(token=TOKEN, instance_id="inst-1", context=CONTEXT) as client,
    ):
        await client.create_session(session_id="mcp-shared", persistent=True)
        await client.start_managed_process("mcp-shared", {"process_id": "p1", "command": "cat"})
        headers = relay_headers(token=TOKEN, instance_id="inst-1", context=CONTEXT)
        async with connect(
            relay_url(f"ws://127.0.0.1:{box.port}", "mcp-shared", "p1"),
            subprotocols=[Subprotocol("mcp")],
            additional_headers=headers,
            proxy=None,
        ) as ws:
            for index in range(3):
                sent = json.dumps({"jsonrpc": "2.0", "id": index, "method": "ping"})
                await ws.send(sent)
                with anyio.fail_after(PATIENCE):
                    assert await ws.recv() == sent  # cat echoes it
            await ws.send(b"{}")  # binary: refused with a JSON-RPC error
            with anyio.fail_after(PATIENCE):
                assert "text frames" in str(await ws.recv())
        metrics = await scrape(f"http://127.0.0.1:{box.port}/metrics")
        frames = "lbp_box_relay_frames_total"
        assert metrics.value(frames, direction="to_process") == 3
        assert metrics.value(frames, direction="to_client") == 3
        assert metrics.value(frames, direction="refused") == 1
        assert metrics.value("lbp_box_managed_processes") == 1
        assert metrics.value("lbp_box_events_total", kind="process.start") == 1
        assert metrics.value("lbp_box_sessions") == 1
