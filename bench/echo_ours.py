"""RPC micro-benchmarks of our ``langbot_plugin.rpc`` (server and client).

    python -m bench.echo_ours serve ws PORT
    python -m bench.echo_ours serve stdio
    python -m bench.echo_ours client ws|stdio PLAN_JSON

The client spawns the matching server as a child process, runs the plan, and prints one
JSON line of raw samples. The server serves ``echo`` and ``file_digest``; ``__ping``
and ``__file_chunk`` are served by the session itself.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from bench.plan import Plan, run_plan
from bench.procs import print_outcome, wait_port
from langbot_plugin.rpc import RequestContext, Route, RouteTable, RPCSession, Transport
from langbot_plugin.rpc.files import REFERENCE_CHUNK_BYTES
from langbot_plugin.rpc.processes import free_port, spawn_linked
from langbot_plugin.rpc.transport_stdio import pipe_transport, process_stdio_transport
from langbot_plugin.rpc.transport_ws import connect_ws, serve_ws

#: The chunk size our own peers use between themselves (runtime <-> worker, ``lbp run``).
OWN_PEER_CHUNK_BYTES = 1 << 20
FILE_VARIANTS = {"file_16k": REFERENCE_CHUNK_BYTES, "file_1m": OWN_PEER_CHUNK_BYTES}


def routes() -> RouteTable:
    async def echo(ctx: RequestContext) -> dict[str, Any]:
        return ctx.data

    async def file_digest(ctx: RequestContext) -> dict[str, Any]:
        content = ctx.session.files.take(ctx.data["file_key"])
        return {"length": len(content), "sha256": hashlib.sha256(content).hexdigest()}

    return RouteTable(echo=Route(echo), file_digest=Route(file_digest))


async def serve(kind: str, port: int) -> None:
    if kind == "stdio":
        async with process_stdio_transport() as transport:
            await RPCSession(transport, routes(), name="bench-server").serve()
        return

    async def on_connection(transport: Transport, _request: object) -> None:
        await RPCSession(transport, routes(), name="bench-server").serve()

    server = await serve_ws(on_connection, "127.0.0.1", port)
    await server.serve_forever()


class OurPeer:
    def __init__(self, session: RPCSession) -> None:
        self.session = session

    async def ping(self) -> None:
        await self.session.call("__ping")

    async def echo(self, blob: str) -> str:
        reply = await self.session.call("echo", {"blob": blob}, timeout=120)
        return str(reply["blob"])

    async def transfer(self, content: bytes, chunk_bytes: int) -> str:
        key = await self.session.send_file(content, suffix="bin", chunk_bytes=chunk_bytes)
        reply = await self.session.call("file_digest", {"file_key": key}, timeout=60)
        return str(reply["sha256"])


@asynccontextmanager
async def connected(kind: str) -> AsyncGenerator[Transport]:
    me = [sys.executable, "-m", "bench.echo_ours", "serve"]
    if kind == "ws":
        port = free_port()
        server = await anyio.open_process([*me, "ws", str(port)], stdin=None, stdout=None)
        try:
            await wait_port(port)
            async with connect_ws(f"ws://127.0.0.1:{port}/") as transport:
                yield transport
        finally:
            server.terminate()
            await server.wait()
        return
    # As LangBot's stdio controller links the runtime: pipes of our own (spawn_linked)
    child, from_child, to_child = await spawn_linked(
        [*me, "stdio"], os.getcwd(), os.environ, stderr=None
    )
    try:
        async with pipe_transport(from_child, to_child) as transport:
            yield transport
    finally:
        child.terminate()
        await child.wait()


async def client(kind: str, plan: Plan) -> dict[str, Any]:
    async with (
        connected(kind) as transport,
        RPCSession(transport, None, name="bench-client").running() as session,
    ):
        return await run_plan(OurPeer(session), plan, FILE_VARIANTS)


def main(argv: list[str]) -> int:
    if argv[0] == "serve":
        port = int(argv[2]) if len(argv) > 2 else 0
        asyncio.run(serve(argv[1], port))
        return 0
    return print_outcome(lambda: asyncio.run(client(argv[1], Plan(**json.loads(argv[2])))))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
