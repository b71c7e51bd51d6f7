"""Frames handed over from a data callback are served in a loop started by
``asyncio.run`` with sniffio installed, as in the released LangBot host's process
(``langbot_plugin.rpc.push_context``): a request from the peer is answered, not lost to
anyio's ``NoEventLoopError``."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import textwrap

SCRIPT = textwrap.dedent(
    """
    import asyncio
    import json

    import sniffio  # noqa: F401

    from langbot_plugin.rpc import RPCSession
    from langbot_plugin.rpc.routes import Route, RouteTable
    from langbot_plugin.rpc.transport_ws import connect_ws, serve_ws


    async def echo(ctx):
        return {"ok": True}


    async def hello(ctx):
        # the client is serving by now: this request reaches it from its data callback
        try:
            return {"echo": await ctx.session.call("echo", {}, timeout=10)}
        except Exception as exc:
            return {"echo": repr(exc)}


    async def main():
        async def on_connection(transport, request):
            server = RPCSession(transport, RouteTable({"hello": Route(hello)}), name="server")
            await server.serve()

        listener = await serve_ws(on_connection, "127.0.0.1", 0)
        port = listener.sockets[0].getsockname()[1]
        async with connect_ws(f"ws://127.0.0.1:{port}/") as transport:
            client = RPCSession(transport, RouteTable({"echo": Route(echo)}), name="client")
            async with client.running():
                print(json.dumps(await client.call("hello", {}, timeout=30)))
        listener.close()


    asyncio.run(main())
    """
)


def test_a_request_pushed_from_the_data_callback_is_served_under_asyncio_run() -> None:
    # a dev dependency: without it anyio never asks sniffio, and this cannot fail
    assert importlib.util.find_spec("sniffio") is not None, "pip install -e '.[dev]'"
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT], check=False, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == '{"echo": {"ok": true}}', done.stderr
    assert "NoEventLoopError" not in done.stderr
