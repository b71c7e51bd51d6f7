"""Frames handed over from a data callback are served in a loop started by
``asyncio.run`` with sniffio installed, as in the released LangBot host's process
(``langbot_plugin.rpc.push_context``): a request from the peer is answered, not lost to
anyio's ``NoEventLoopError``. Over WebSocket and over pipes (the host's default stdio
link to ``lbp rt``)."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

import pytest

SCRIPT = textwrap.dedent(
    """
    import asyncio
    import contextlib
    import json
    import os
    import sys

    import sniffio  # noqa: F401

    from langbot_plugin.rpc import RPCSession
    from langbot_plugin.rpc.routes import Route, RouteTable
    from langbot_plugin.rpc.transport_stdio import pipe_transport
    from langbot_plugin.rpc.transport_ws import connect_ws, serve_ws


    async def echo(ctx):
        return {"ok": True}


    async def hello(ctx):
        # the client serves by now: this request reaches it from its data callback
        try:
            return {"echo": await ctx.session.call("echo", {}, timeout=10)}
        except Exception as exc:
            return {"echo": repr(exc)}


    async def ask(transport):
        client = RPCSession(transport, RouteTable({"echo": Route(echo)}), name="client")
        async with client.running():
            print(json.dumps(await client.call("hello", {}, timeout=30)))


    def server(transport):
        return RPCSession(transport, RouteTable({"hello": Route(hello)}), name="server")


    async def over_websocket():
        async def on_connection(transport, request):
            await server(transport).serve()

        listener = await serve_ws(on_connection, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        async with connect_ws(f"ws://127.0.0.1:{port}/") as transport:
            await ask(transport)
        listener.close()


    async def over_pipes():
        to_server, to_client = os.pipe(), os.pipe()
        async with (
            pipe_transport(to_server[0], to_client[1]) as serving,
            pipe_transport(to_client[0], to_server[1]) as asking,
        ):
            task = asyncio.create_task(server(serving).serve())
            await ask(asking)
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


    asyncio.run({"ws": over_websocket, "pipes": over_pipes}[sys.argv[1]]())
    """
)


@pytest.mark.parametrize("link", ["ws", "pipes"])
def test_a_request_pushed_from_the_data_callback_is_served_under_asyncio_run(link: str) -> None:
    # a dev dependency: without it anyio never asks sniffio, and this cannot fail
    assert importlib.util.find_spec("sniffio") is not None, "pip install -e '.[dev]'"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, link],
        check=False,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '{"echo": {"ok": true}}', done.stderr
    assert "NoEventLoopError" not in done.stderr
