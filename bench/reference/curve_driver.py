"""call_tool latency against plugins loaded, on the reference side (0.7.18).

    python curve_driver.py PLUGIN_DIR PLAN_JSON

Runs under the reference interpreter, the counterpart of ``bench.curve_plugins_ours``:
the reference ``lbp rt`` played by the host of ``host_driver.py`` (the released host's
handshake and contexts), a fleet of reference ``lbp run`` debug plugins grown to each
size of the plan (copies under distinct names, ``bench/fleet.py``), each synced with
the ``apply_plugin_installation`` the host sends for a new debug row; at each size,
sequential ``call_tool`` calls round-robin over the fleet's tools. Prints one JSON line.
"""

from __future__ import annotations

import asyncio
import sys
import time
import uuid
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# host_driver from here; procs and fleet (standard library only) from bench/, appended
# so that the repository root (our package) never shadows the reference.
sys.path += [str(HERE), str(HERE.parent)]
from fleet import fleet_copy, identity, tool_name  # noqa: E402
from host_driver import Act, HostHandler, handshake, main, session_payload  # noqa: E402
from procs import stop_process, tree_rss_mb  # noqa: E402

REGISTER_TIMEOUT = 600.0


async def initialized(host: HostHandler) -> set[tuple[str, str]]:
    data = await host.call_action(Act.LIST_PLUGINS, {}, timeout=30, action_context=host.ws.bridge)
    seen: set[tuple[str, str]] = set()
    for plugin in data["plugins"]:
        metadata = plugin["manifest"]["manifest"]["metadata"]
        if plugin["status"] == "initialized":
            seen.add((metadata["author"], metadata["name"]))
    return seen


async def apply_debug_row(host: HostHandler, key: tuple[str, str]) -> None:
    """What the host sends for a new debug row (as ``host_driver`` does for its plugin)."""
    row = host.ws.settings[key]
    binding = {
        **host.ws.workspace,
        "installation_uuid": row["installation_uuid"],
        "runtime_revision": row["runtime_revision"],
        "artifact_digest": row["artifact_digest"],
    }
    await host.call_action(
        Act.APPLY,
        {"enabled": True, "execution_mode": "dedicated"},
        timeout=600,
        action_context=binding,
    )


async def drive(
    host: HostHandler,
    plan: dict[str, Any],
    *,
    plugin_src: Path,
    work: Path,
    debug_port: int,
    lbp: str,
    rt_pid: int,
) -> dict[str, Any]:
    debug = debug_port
    ws = host.ws
    await handshake(host)
    info = await host.call_action(Act.GET_DEBUG_INFO, {}, timeout=10, action_context=ws.workspace)
    env = (
        f"DEBUG_RUNTIME_WS_URL=ws://127.0.0.1:{debug}/plugin/debug/ws\n"
        f"PLUGIN_DEBUG_KEY={info['plugin_debug_key']}\n"
    )
    log = (work / "plugins.log").open("wb")
    plugins: list[asyncio.subprocess.Process] = []
    applied: set[tuple[str, str]] = set()
    out: dict[str, Any] = {"sizes": {}}
    session = session_payload(ws)
    counter = iter(range(10**9))
    try:
        for size in plan["sizes"]:
            while len(plugins) < size:
                index = len(plugins)
                copy = fleet_copy(plugin_src, work / f"p{index}", index, env)
                plugins.append(
                    await asyncio.create_subprocess_exec(
                        lbp,
                        "run",
                        cwd=copy,
                        stdin=asyncio.subprocess.DEVNULL,
                        stdout=log,
                        stderr=log,
                    )
                )
            wanted = {identity(i) for i in range(size)}
            deadline = time.monotonic() + REGISTER_TIMEOUT
            while True:
                seen = await initialized(host)
                for key in sorted((seen & wanted) - applied):
                    if key in ws.settings:
                        await apply_debug_row(host, key)
                        applied.add(key)
                if wanted <= seen and wanted <= applied:
                    break
                if any(p.returncode is not None for p in plugins):
                    raise RuntimeError("a reference lbp run exited while the fleet registered")
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{len(wanted - seen)} of {size} plugins never registered")
                await asyncio.sleep(0.05)

            async def call(size: int = size) -> None:
                n = next(counter)
                data = await host.call_action(
                    Act.CALL_TOOL,
                    {
                        "tool_name": tool_name(n % size),
                        "tool_parameters": {"text": f"hi {n}"},
                        "session": session,
                        "query_id": n,
                        "query_uuid": str(uuid.uuid4()),
                        "include_plugins": None,
                    },
                    timeout=180,
                    action_context=ws.bridge,
                )
                if data.get("tool_response") != {"echo": {"text": f"hi {n}"}}:
                    raise RuntimeError(f"unexpected tool response {data!r}")

            for _ in range(max(plan["warmup"], 2 * size)):  # every tool's first calls
                await call()
            samples = []
            for _ in range(plan["calls"]):
                t0 = time.perf_counter()
                await call()
                samples.append(time.perf_counter() - t0)
            out["sizes"][str(size)] = {"call": samples, "rt_rss": tree_rss_mb(rt_pid)}
    finally:
        await asyncio.gather(*(stop_process(p, grace=5.0) for p in plugins))
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:], drive))
