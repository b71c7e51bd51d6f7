"""RPC micro-benchmarks of the reference SDK (``langbot-plugin==0.7.18``).

Runs under the *reference* interpreter only (``LBP_REFERENCE_PYTHON``); it imports the
reference package's handler and connection classes and never anything of ours. It is
our own driver code calling the reference's API.

    python rpc_driver.py serve ws PORT       echo server on 127.0.0.1:PORT
    python rpc_driver.py serve stdio         echo server on stdin/stdout
    python rpc_driver.py client ws|stdio PLAN_JSON
                                             spawn the matching server, run the plan,
                                             print one JSON line of raw samples

The server serves ``__ping``, ``echo`` (returns its data) and ``file_digest`` (reads a
file received with ``__file_chunk`` and returns its length and SHA-256).
"""

from __future__ import annotations

import asyncio
import base64
import enum
import hashlib
import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langbot_plugin.entities.io.resp import ActionResponse
from langbot_plugin.runtime.io.handler import Handler

# bench/procs.py is standard library only; the bench folder (not the repository root,
# which holds our package) is appended to the path so it never shadows the reference.
sys.path.append(str(Path(__file__).resolve().parent.parent))
from procs import (
    free_port,
    print_outcome,
    wait_port,
)

ME = os.path.abspath(__file__)


class Act(enum.Enum):
    """The action names this driver calls (the reference API takes enum members)."""

    PING = "__ping"
    ECHO = "echo"
    FILE_DIGEST = "file_digest"


class EchoHandler(Handler):
    name = "BenchEcho"

    def __init__(self, conn: Any) -> None:
        super().__init__(conn)

        async def ping(data: dict[str, Any]) -> ActionResponse:
            return ActionResponse.success({"message": "pong"})

        async def echo(data: dict[str, Any]) -> ActionResponse:
            return ActionResponse.success(data)

        async def file_digest(data: dict[str, Any]) -> ActionResponse:
            content = await self.read_local_file(data["file_key"])
            await self.delete_local_file(data["file_key"])
            return ActionResponse.success(
                {"length": len(content), "sha256": hashlib.sha256(content).hexdigest()}
            )

        self.actions[Act.PING.value] = ping
        self.actions[Act.ECHO.value] = echo
        self.actions[Act.FILE_DIGEST.value] = file_digest


async def _setup_process() -> None:
    # What the reference runtime and ``lbp run`` do at start-up.
    from langbot_plugin.runtime.bounded_executor import (
        configure_bounded_default_executor_from_env,
    )

    configure_bounded_default_executor_from_env(thread_name_prefix="bench-blocking")


# ----------------------------------------------------------------------------- server


async def serve_ws(port: int) -> None:
    from langbot_plugin.runtime.io.controllers.ws.server import WebSocketServerController

    await _setup_process()

    async def on_connection(conn: Any) -> None:
        await EchoHandler(conn).run()

    controller = WebSocketServerController(port, host="127.0.0.1")
    await controller.run(on_connection)


async def serve_stdio() -> None:
    from langbot_plugin.runtime.io.controllers.stdio.server import StdioServerController

    await _setup_process()

    async def on_connection(conn: Any) -> None:
        await EchoHandler(conn).run()

    await StdioServerController().run(on_connection)


# ----------------------------------------------------------------------------- client


async def run_plan(handler: Handler, plan: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for _ in range(plan["warmup"]):
        await handler.call_action(Act.PING, {})
    samples = []
    for _ in range(plan["ping"]):
        t0 = time.perf_counter()
        await handler.call_action(Act.PING, {})
        samples.append(time.perf_counter() - t0)
    out["ping"] = samples

    workers, total = plan["workers"], plan["concurrent"]
    remaining = [total]

    async def worker() -> None:
        while remaining[0] > 0:
            remaining[0] -= 1
            await handler.call_action(Act.PING, {})

    await asyncio.gather(*(worker() for _ in range(workers)))  # warm the path
    remaining[0] = total
    t0 = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(workers)))
    out["concurrent"] = {"elapsed": time.perf_counter() - t0, "total": total}

    # Incompressible ASCII (base64 of random bytes), as files travel; no JSON escaping.
    payload = base64.b64encode(os.urandom(plan["echo_bytes"] * 3 // 4)).decode("ascii")
    samples = []
    for i in range(plan["echo_rounds"] + 1):
        t0 = time.perf_counter()
        reply = await handler.call_action(Act.ECHO, {"blob": payload}, timeout=120)
        elapsed = time.perf_counter() - t0
        if len(reply["blob"]) != len(payload):
            raise RuntimeError("echo came back truncated")
        if i:  # the first round is a warm-up
            samples.append(elapsed)
    out["echo"] = samples

    content = os.urandom(plan["file_bytes"])
    digest = hashlib.sha256(content).hexdigest()
    samples = []
    for i in range(plan["file_rounds"] + 1):
        t0 = time.perf_counter()
        key = await handler.send_file(content, "bin")
        reply = await handler.call_action(Act.FILE_DIGEST, {"file_key": key}, timeout=60)
        elapsed = time.perf_counter() - t0
        if reply["sha256"] != digest:
            raise RuntimeError("file arrived corrupted")
        if i:
            samples.append(elapsed)
    out["file_16k"] = samples
    return out


async def client(transport: str, plan: dict[str, Any]) -> dict[str, Any]:
    await _setup_process()
    result: dict[str, Any] = {}

    async def on_connection(conn: Any) -> None:
        handler = EchoHandler(conn)
        runner = asyncio.create_task(handler.run())
        try:
            result.update(await run_plan(handler, plan))
        finally:
            runner.cancel()

    me = ME
    if transport == "ws":
        from langbot_plugin.runtime.io.controllers.ws.client import WebSocketClientController

        port = free_port()
        server = await asyncio.create_subprocess_exec(
            sys.executable, me, "serve", "ws", str(port), stdin=asyncio.subprocess.DEVNULL
        )
        try:
            await wait_port(port)
            failure: list[BaseException | None] = []

            async def failed(_controller: Any, exc: BaseException | None) -> None:
                failure.append(exc)

            await WebSocketClientController(f"ws://127.0.0.1:{port}/", failed).run(on_connection)
            if failure:
                raise RuntimeError(f"reference client failed: {failure[0]!r}")
        finally:
            server.terminate()
            await server.wait()
    else:
        from langbot_plugin.runtime.io.controllers.stdio.client import StdioClientController

        controller = StdioClientController(
            sys.executable, [me, "serve", "stdio"], dict(os.environ), os.getcwd()
        )
        await controller.run(on_connection)
    return result


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # The reference keeps transferred files under ./data/temp/lbp; keep that out of the repo.
    os.chdir(os.environ.get("BENCH_WORKDIR") or tempfile.mkdtemp(prefix="lbp-bench-ref-"))
    os.environ.setdefault("BENCH_WORKDIR", os.getcwd())
    if argv[0] == "serve":
        if argv[1] == "ws":
            asyncio.run(serve_ws(int(argv[2])))
        else:
            asyncio.run(serve_stdio())
        return 0
    return print_outcome(lambda: asyncio.run(client(argv[1], json.loads(argv[2]))))


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
