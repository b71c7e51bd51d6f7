"""Shared fixtures: the anyio backend, free ports (``rpc.processes.free_port``, the one
port helper), and connected transport pairs.

Every test runs under the time limit of :mod:`tests.timeouts`.
"""

from __future__ import annotations

import json
import os
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from langbot_plugin.rpc.processes import free_port
from langbot_plugin.rpc.transport import Transport

pytest_plugins = ["tests.timeouts"]


@pytest.fixture
def anyio_backend() -> str:
    return "asyncio"


async def raw_exchange(transport: Transport, frame: str, seconds: float = 30) -> dict[str, Any]:
    """Send one raw frame and read the one frame that answers it (bounded)."""
    await transport.send.send(frame)
    with anyio.fail_after(seconds):
        reply = await transport.receive.receive()
    assert isinstance(reply, str), reply
    result: dict[str, Any] = json.loads(reply)
    return result


@asynccontextmanager
async def memory_link() -> AsyncGenerator[tuple[Transport, Transport]]:
    from langbot_plugin.rpc.transport_memory import memory_pair

    a, b = memory_pair()
    try:
        yield a, b
    finally:
        for transport in (a, b):
            await transport.send.aclose()
            await transport.receive.aclose()


@asynccontextmanager
async def pipe_link(
    frame_threshold: int | None = 1024,
) -> AsyncGenerator[tuple[Transport, Transport]]:
    from langbot_plugin.rpc.transport_stdio import pipe_transport

    a_read, b_write = os.pipe()
    b_read, a_write = os.pipe()
    async with (
        pipe_transport(a_read, a_write, frame_threshold=frame_threshold) as a,
        pipe_transport(b_read, b_write, frame_threshold=frame_threshold) as b,
    ):
        yield a, b


@asynccontextmanager
async def websockets_link() -> AsyncGenerator[tuple[Transport, Transport]]:
    from langbot_plugin.rpc.transport_ws import connect_ws, serve_ws

    accepted: list[Transport] = []
    ready = anyio.Event()
    done = anyio.Event()

    async def on_connection(transport: Transport, _request: object) -> None:
        accepted.append(transport)
        ready.set()
        await done.wait()

    port = free_port()
    server = await serve_ws(on_connection, "127.0.0.1", port)
    try:
        async with connect_ws(f"ws://127.0.0.1:{port}/") as client:
            await ready.wait()
            yield client, accepted[0]
            done.set()
    finally:
        done.set()
        server.close()
        await server.wait_closed()


@asynccontextmanager
async def aiohttp_link() -> AsyncGenerator[tuple[Transport, Transport]]:
    from aiohttp import web

    from langbot_plugin.rpc.transport_aiohttp import aiohttp_transport, websocket_response
    from langbot_plugin.rpc.transport_ws import connect_ws

    accepted: list[Transport] = []
    ready = anyio.Event()
    done = anyio.Event()

    async def handle(request: web.Request) -> web.WebSocketResponse:
        ws = websocket_response()
        await ws.prepare(request)
        accepted.append(aiohttp_transport(ws))
        ready.set()
        await done.wait()
        await ws.close()
        return ws

    app = web.Application()
    app.router.add_get("/rpc/ws", handle)
    runner = web.AppRunner(app)
    await runner.setup()
    port = free_port()
    site = web.TCPSite(runner, "127.0.0.1", port)
    await site.start()
    try:
        async with connect_ws(f"ws://127.0.0.1:{port}/rpc/ws") as client:
            await ready.wait()
            yield client, accepted[0]
            done.set()
    finally:
        done.set()
        await runner.cleanup()


LINKS = {
    "memory": memory_link,
    "pipes": pipe_link,
    "websockets": websockets_link,
    "aiohttp": aiohttp_link,
}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "link_kind" in metafunc.fixturenames:
        metafunc.parametrize("link_kind", sorted(LINKS))


@pytest.fixture
async def link(link_kind: str) -> AsyncGenerator[tuple[Transport, Transport]]:
    """A connected transport pair of each kind in turn."""
    async with LINKS[link_kind]() as pair:
        yield pair
