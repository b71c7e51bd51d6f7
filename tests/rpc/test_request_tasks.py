"""The serving tasks of a session never outlive it, and one failing task harms nothing."""

from __future__ import annotations

import asyncio
import logging

import anyio
import pytest

from langbot_plugin.rpc import ConnectionClosedError, RPCSession
from langbot_plugin.rpc.request_tasks import RequestTasks
from langbot_plugin.rpc.transport_memory import memory_pair
from tests.rpc.test_session import Probe
from tests.support.waiting import PATIENCE

pytestmark = pytest.mark.anyio


async def test_aclose_cancels_and_waits_for_every_task() -> None:
    tasks = RequestTasks("t")
    cleaned: list[int] = []
    started = anyio.Event()

    async def hang(n: int) -> None:
        try:
            started.set()
            await anyio.sleep_forever()
        finally:
            await asyncio.sleep(0)  # cleanup that itself awaits
            cleaned.append(n)

    for n in range(3):
        tasks.start(hang(n))
    await started.wait()
    await tasks.aclose()
    assert sorted(cleaned) == [0, 1, 2]
    assert len(tasks) == 0


async def test_start_after_close_never_runs_the_coroutine() -> None:
    tasks = RequestTasks("t")
    await tasks.aclose()
    ran: list[bool] = []

    async def mark() -> None:
        ran.append(True)

    tasks.start(mark())  # closed unstarted: no "never awaited" warning either
    await asyncio.sleep(0)
    assert ran == []


async def test_a_failing_task_is_logged_and_the_rest_go_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tasks = RequestTasks("t")
    done = anyio.Event()

    async def boom() -> None:
        raise ValueError("bug in a reply path")

    async def fine() -> None:
        await asyncio.sleep(0.01)
        done.set()

    with caplog.at_level(logging.ERROR, logger="langbot_plugin.rpc.request_tasks"):
        tasks.start(boom())
        tasks.start(fine())
        await done.wait()
    assert "t: a serving task failed" in caplog.text
    assert "bug in a reply path" in caplog.text
    await tasks.aclose()


async def test_serve_returns_only_after_its_handlers_are_cancelled() -> None:
    probe = Probe()
    client_t, server_t = memory_pair()
    server = RPCSession(server_t, probe.routes(), name="server")
    client = RPCSession(client_t, name="client")

    async def call_until_the_link_drops() -> None:
        with pytest.raises(ConnectionClosedError):
            await client.call("hang", {})

    cancelled_when_serve_returned: list[bool] = []

    async def serve() -> None:
        await server.serve()
        cancelled_when_serve_returned.append(probe.cancelled.is_set())

    with anyio.fail_after(PATIENCE):
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            tg.start_soon(client.serve)
            tg.start_soon(call_until_the_link_drops)
            await probe.started.wait()
            client.close()  # the peer goes away while "hang" runs on the server
    # serve() returned once the link was gone, and not before the handler was stopped
    assert cancelled_when_serve_returned == [True]
