"""host -> ``lbp rt`` -> plugin, on our side.

    python -m bench.host_ours HOST_PLAN_JSON

Starts our ``lbp rt`` in a child process, connects to it the way the released host
does (:class:`PluginRuntimeClient` serving :class:`LocalHost`), fetches a debug key,
starts ``lbp run`` for ``bench/plugins/echotool`` and times until the runtime lists the
plugin as initialized (several rounds), reads the idle RSS of both processes, then
times ``call_tool``: sequential calls and rounds of concurrent calls. Prints one JSON
line of raw samples.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import IO, Any

from anyio.abc import Process

from bench.plan import HostPlan
from bench.procs import cpu_seconds, one_line_error, print_outcome, serve_bursts, tree_rss_mb
from langbot_plugin import stack
from langbot_plugin.host import LocalHost, PluginRuntimeClient
from langbot_plugin.rpc.processes import stop_process
from langbot_plugin.stack import RuntimeChild

PLUGIN_SRC = Path(__file__).resolve().parent / "plugins" / "echotool"
IDENTITY = ("bench", "echotool")
TOOL = "echo_tool"
ROLES = ("host", "runtime", "plugin")
#: In-flight requests a connection accepts (ours and the reference alike).
MAX_INFLIGHT = 128


def session_payload(client: PluginRuntimeClient) -> dict[str, Any]:
    """A ``Session`` dump as the host sends it with ``call_tool``."""
    now = time.time()
    return {
        "instance_uuid": client.workspace.instance_uuid,
        "workspace_uuid": client.workspace.workspace_uuid,
        "placement_generation": 1,
        "launcher_type": "person",
        "launcher_id": "bench-user",
        "sender_id": "bench-user",
        "bot_uuid": "bench-bot",
        "use_prompt_name": "default",
        "using_conversation": None,
        "conversations": [],
        "create_time": now,
        "update_time": now,
    }


def tool_caller(client: PluginRuntimeClient) -> Callable[[], Awaitable[None]]:
    """One ``call_tool`` of the echo tool per call of the result, its answer checked."""
    session = session_payload(client)
    counter = iter(range(10**9))

    async def call() -> None:
        n = next(counter)
        reply = await client.call_tool(
            TOOL,
            {"text": f"hi {n}"},
            session=session,
            query_id=n,
            query_uuid=str(uuid.uuid4()),
        )
        if reply != {"echo": {"text": f"hi {n}"}}:
            raise RuntimeError(f"unexpected tool response {reply!r}")

    return call


async def listed(client: PluginRuntimeClient, identity: tuple[str, str] = IDENTITY) -> bool:
    for plugin in await client.list_plugins():
        if (plugin.author, plugin.name) == identity and plugin.status == "initialized":
            return True
    return False


def last_line(path: Path) -> str:
    lines = [line for line in path.read_text(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no output)"


async def wait_listed(
    client: PluginRuntimeClient,
    present: bool,
    plugin: Process,
    plugin_log: Path,
    *,
    timeout: float = 60.0,
    identity: tuple[str, str] = IDENTITY,
) -> None:
    """Poll ``list_plugins`` until the plugin is (or is no longer) listed as initialized."""
    deadline = time.monotonic() + timeout
    while await listed(client, identity) != present:
        if present and plugin.returncode is not None:
            raise RuntimeError(f"lbp run exited {plugin.returncode}: {last_line(plugin_log)}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"plugin {'never appeared' if present else 'never left'}")
        await asyncio.sleep(0.002)


LBP = str(Path(sys.executable).parent / "lbp")


@asynccontextmanager
async def start_runtime(
    work: Path, *extra: str, env: dict[str, str] | None = None
) -> AsyncGenerator[RuntimeChild]:
    """Our ``lbp rt`` (the local stack's starter) on two free ports, with ``extra``
    flags (``env`` for its environment), its data in ``work/data`` and its log in
    ``work/rt.log``."""
    async with stack.start_runtime(
        "--log-level",
        "WARNING",
        *extra,
        data_dir=work / "data",
        command=(LBP,),
        cwd=work,
        log=work / "rt.log",
        env=env,
    ) as rt:
        yield rt


async def debug_plugin_dir(
    client: PluginRuntimeClient, source: Path, work: Path, debug: int
) -> tuple[Path, str]:
    """A copy of ``source`` whose ``.env`` points ``lbp run`` at the runtime's debug port
    (as an author's does), and the debug key."""
    key = await client.get_debug_key()
    plugin_dir = work / source.name
    shutil.copytree(source, plugin_dir)
    (plugin_dir / ".env").write_text(
        f"DEBUG_RUNTIME_WS_URL=ws://127.0.0.1:{debug}/plugin/debug/ws\nPLUGIN_DEBUG_KEY={key}\n"
    )
    return plugin_dir, key


def debug_plugin(
    rt: RuntimeChild,
    plugin_dir: Path,
    key: str,
    log: IO[bytes],
    env: dict[str, str] | None = None,
) -> AbstractAsyncContextManager[Process]:
    """``lbp run`` in ``plugin_dir`` (the local stack's starter; ``env`` for its
    environment), output to ``log``."""
    return stack.start_plugin(
        plugin_dir, rt.debug_url, key, "--log-level", "WARNING", command=(LBP,), env=env, log=log
    )


async def measure(plan: HostPlan, work: Path) -> dict[str, Any]:
    plugin: Process | None = None
    out: dict[str, Any] = {}
    async with (
        start_runtime(work) as rt,
        rt.host(LocalHost()) as client,
        AsyncExitStack() as running,  # the plugin processes: stopped before the runtime
    ):
        plugin_dir, key = await debug_plugin_dir(client, PLUGIN_SRC, work, rt.debug_port)
        plugin_log_path = work / "plugin.log"
        plugin_log = running.enter_context(plugin_log_path.open("wb"))
        spawn: list[float] = []
        spawn_cpu: list[float] = []
        for round_ in range(plan.spawn_rounds):
            t0 = time.perf_counter()
            plugin = await running.enter_async_context(
                debug_plugin(rt, plugin_dir, key, plugin_log)
            )
            await wait_listed(client, True, plugin, plugin_log_path)
            spawn.append(time.perf_counter() - t0)
            spawn_cpu.append(cpu_seconds(plugin.pid))
            if round_ < plan.spawn_rounds - 1:
                await stop_process(plugin)
                await wait_listed(client, False, plugin, plugin_log_path)
        out["spawn"] = spawn
        out["spawn_cpu"] = spawn_cpu
        assert plugin is not None

        await asyncio.sleep(plan.idle_seconds)
        out["rss"] = {"runtime": tree_rss_mb(rt.process.pid), "plugin": tree_rss_mb(plugin.pid)}

        call = tool_caller(client)
        for _ in range(plan.warmup):
            await call()
        samples: list[float] = []
        pids = (os.getpid(), rt.process.pid, plugin.pid)
        cpu_before = [cpu_seconds(pid) for pid in pids]
        for _ in range(plan.calls):
            t0 = time.perf_counter()
            await call()
            samples.append(time.perf_counter() - t0)
        out["call"] = samples
        out["call_cpu"] = {
            who: (cpu_seconds(pid) - before) / plan.calls
            for who, pid, before in zip(ROLES, pids, cpu_before, strict=True)
        }

        # 200 callers at once, at most MAX_INFLIGHT requests on the wire (the
        # per-connection cap both runtimes enforce); then one ungated burst, to
        # report how the runtime copes with a host that does not hold back.
        gate = asyncio.Semaphore(MAX_INFLIGHT)

        async def gated_call() -> None:
            async with gate:
                await call()

        async def burst(fn: Callable[[], Awaitable[None]]) -> dict[str, Any]:
            t0 = time.perf_counter()
            results = await asyncio.gather(
                *(fn() for _ in range(plan.concurrent)), return_exceptions=True
            )
            elapsed = time.perf_counter() - t0
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:
                out.setdefault("error_sample", one_line_error(errors[0]))
            return {"elapsed": elapsed, "calls": plan.concurrent, "errors": len(errors)}

        if plan.paired_bursts:
            out["bursts"] = await serve_bursts(lambda: burst(gated_call), pids)
            return out
        out["concurrent"] = [await burst(gated_call) for _ in range(plan.concurrent_rounds)]
        out["ungated"] = await burst(call)
    return out


def main(argv: list[str]) -> int:
    plan = HostPlan(**json.loads(argv[0]))
    work = Path(tempfile.mkdtemp(prefix="lbp-bench-ours-"))
    try:
        return print_outcome(lambda: asyncio.run(measure(plan, work)), logs=work)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
