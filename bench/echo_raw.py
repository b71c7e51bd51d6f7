"""The engine floor: a minimal JSON echo on the bare ``websockets`` library (and on pipes).

    python -m bench.echo_raw serve ws PORT
    python -m bench.echo_raw serve stdio
    python -m bench.echo_raw client ws|stdio PLAN_JSON

Same frames as the RPC benchmarks (``{"seq_id", "action", "data"}`` requests answered
with ``{"seq_id", "code", "message", "data", "chunk_status"}``), parsed and built with
``json`` on both ends. Sequential calls send and then read the next frame directly;
the concurrent test adds the least an RPC needs, a reader task routing answers to
futures by ``seq_id``. No file transfer: that is an RPC feature, not an engine one.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import sys
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from typing import Any

from websockets.asyncio.client import ClientConnection, connect
from websockets.asyncio.server import ServerConnection, serve

from bench.plan import Plan, run_plan
from bench.procs import free_port, print_outcome, stop_process, wait_port

MAX_BYTES = 64 << 20


def answer(text: str | bytes) -> str:
    request = json.loads(text)
    return json.dumps(
        {
            "seq_id": request["seq_id"],
            "code": 0,
            "message": "success",
            "data": request["data"] if request["action"] != "__ping" else {"message": "pong"},
            "chunk_status": "continue",
        }
    )


async def serve_ws(port: int) -> None:
    async def handler(ws: ServerConnection) -> None:
        async for message in ws:
            await ws.send(answer(message))

    async with serve(handler, "127.0.0.1", port, max_size=MAX_BYTES, compression=None) as server:
        await server.serve_forever()


async def serve_stdio() -> None:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=MAX_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    while line := await reader.readline():
        writer.write(answer(line).encode() + b"\n")
        await writer.drain()


class RawPeer:
    """Sequential calls go straight to the engine; concurrent ones through a router."""

    def __init__(self, send: Any, recv: Any) -> None:
        self._send = send
        self._recv = recv
        self._seq = itertools.count(1)
        self._waiters: dict[int, asyncio.Future[dict[str, Any]]] = {}
        self._router: asyncio.Task[None] | None = None

    async def _call(self, action: str, data: dict[str, Any]) -> dict[str, Any]:
        seq = next(self._seq)
        if self._router is None:
            await self._send(json.dumps({"seq_id": seq, "action": action, "data": data}))
            return json.loads(await self._recv())["data"]
        future = asyncio.get_running_loop().create_future()
        self._waiters[seq] = future
        await self._send(json.dumps({"seq_id": seq, "action": action, "data": data}))
        return (await future)["data"]

    async def _route(self) -> None:
        while True:
            response = json.loads(await self._recv())
            self._waiters.pop(response["seq_id"]).set_result(response)

    async def set_concurrent(self, on: bool) -> None:
        """Start (or stop) the reader task that routes answers to waiting callers."""
        if on and self._router is None:
            self._router = asyncio.create_task(self._route())
        elif not on and self._router is not None:
            self._router.cancel()
            await asyncio.gather(self._router, return_exceptions=True)
            self._router = None

    async def ping(self) -> None:
        await self._call("__ping", {})

    async def echo(self, blob: str) -> str:
        return str((await self._call("echo", {"blob": blob}))["blob"])

    async def transfer(self, content: bytes, chunk_bytes: int) -> str:
        raise NotImplementedError("raw engines have no file transfer")


@asynccontextmanager
async def ws_server(module: str) -> AsyncGenerator[int]:
    """``python -m <module> serve ws PORT`` (ours or this floor) for the block; yields
    the port once it accepts connections."""
    port = free_port()
    server = await asyncio.create_subprocess_exec(
        sys.executable, "-m", module, "serve", "ws", str(port)
    )
    try:
        await wait_port(port)
        yield port
    finally:
        await stop_process(server)


async def client(kind: str, plan: Plan) -> dict[str, Any]:
    if kind == "ws":
        async with ws_server("bench.echo_raw") as port:
            ws: ClientConnection
            async with connect(
                f"ws://127.0.0.1:{port}/", max_size=MAX_BYTES, compression=None
            ) as ws:
                return await run_plan(RawPeer(ws.send, ws.recv), plan)
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.echo_raw",
        "serve",
        "stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        limit=MAX_BYTES,
    )
    assert child.stdin is not None
    assert child.stdout is not None
    stdin, stdout = child.stdin, child.stdout

    async def send(text: str) -> None:
        stdin.write(text.encode() + b"\n")
        await stdin.drain()

    try:
        return await run_plan(RawPeer(send, stdout.readline), plan)
    finally:
        stdin.close()
        await stop_process(child)


def main(argv: list[str]) -> int:
    if argv[0] == "serve":
        asyncio.run(serve_ws(int(argv[2])) if argv[1] == "ws" else serve_stdio())
        return 0
    return print_outcome(lambda: asyncio.run(client(argv[1], Plan(**json.loads(argv[2])))))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
