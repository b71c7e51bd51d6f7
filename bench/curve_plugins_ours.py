"""call_tool latency against plugins loaded, on our side.

    python -m bench.curve_plugins_ours '{"sizes": [1, 10, 50], "calls": 300, "warmup": 30}'

Starts our ``lbp rt``, connects as the host does (:class:`PluginRuntimeClient` serving
:class:`LocalHost`), and grows a fleet of ``lbp run`` debug plugins (copies of
``bench/plugins/echotool`` under distinct names, :mod:`bench.fleet`) to each size in
turn. At each size, once every plugin is listed as initialized and each tool has been
called twice (a plugin's first calls are slower: the warm-up), it times sequential
``call_tool`` calls spread round-robin over the loaded plugins' tools, and reads the
runtime's RSS. Prints one JSON line: ``{"sizes": {"10": {"call": [...], "rt_rss": MB}}}``.
"""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
import uuid
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

from anyio.abc import Process

from bench.fleet import fleet_copy, identity, tool_name
from bench.host_ours import PLUGIN_SRC, debug_plugin, session_payload, start_runtime
from bench.procs import print_outcome, tree_rss_mb
from langbot_plugin.host import LocalHost, PluginRuntimeClient

#: How long a fleet may take to register (50 interpreters starting on a small machine).
REGISTER_TIMEOUT = 600.0


async def wait_fleet(client: PluginRuntimeClient, size: int, plugins: list[Process]) -> None:
    wanted = {identity(i) for i in range(size)}
    deadline = time.monotonic() + REGISTER_TIMEOUT
    while True:
        seen = {
            (p.author, p.name) for p in await client.list_plugins() if p.status == "initialized"
        }
        if wanted <= seen:
            return
        dead = [p.returncode for p in plugins if p.returncode is not None]
        if dead:
            raise RuntimeError(f"lbp run exited {dead[0]} while the fleet registered")
        if time.monotonic() > deadline:
            raise TimeoutError(f"{len(wanted - seen)} of {size} plugins never registered")
        await asyncio.sleep(0.05)


async def measure(plan: dict[str, Any], work: Path) -> dict[str, Any]:
    plugins: list[Process] = []
    out: dict[str, Any] = {"sizes": {}}
    async with (
        start_runtime(work) as rt,
        rt.host(LocalHost()) as client,
        AsyncExitStack() as running,  # the plugin processes: stopped before the runtime
    ):
        key = await client.get_debug_key()
        env = f"DEBUG_RUNTIME_WS_URL={rt.debug_url}\nPLUGIN_DEBUG_KEY={key}\n"
        log = running.enter_context((work / "plugins.log").open("wb"))
        session = session_payload(client)
        counter = iter(range(10**9))
        for size in plan["sizes"]:
            while len(plugins) < size:
                index = len(plugins)
                copy = fleet_copy(PLUGIN_SRC, work / f"p{index}", index, env)
                plugins.append(await running.enter_async_context(debug_plugin(rt, copy, key, log)))
            await wait_fleet(client, size, plugins)

            async def call(size: int = size) -> None:
                n = next(counter)
                reply = await client.call_tool(
                    tool_name(n % size),
                    {"text": f"hi {n}"},
                    session=session,
                    query_id=n,
                    query_uuid=str(uuid.uuid4()),
                )
                if reply != {"echo": {"text": f"hi {n}"}}:
                    raise RuntimeError(f"unexpected tool response {reply!r}")

            for _ in range(max(plan["warmup"], 2 * size)):  # every tool's first calls
                await call()
            samples: list[float] = []
            for _ in range(plan["calls"]):
                t0 = time.perf_counter()
                await call()
                samples.append(time.perf_counter() - t0)
            out["sizes"][str(size)] = {"call": samples, "rt_rss": tree_rss_mb(rt.process.pid)}
    return out


def main(argv: list[str]) -> int:
    plan = json.loads(argv[0])
    with tempfile.TemporaryDirectory(prefix="lbp-bench-fleet-") as tmp:
        work = Path(tmp)
        return print_outcome(lambda: asyncio.run(measure(plan, work)), logs=work)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
