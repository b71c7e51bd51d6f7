"""host -> ``lbp rt`` -> plugin, on the reference side (``langbot-plugin==0.7.18``).

    python host_driver.py PLUGIN_DIR HOST_PLAN_JSON

Runs under the reference interpreter. Starts the reference ``lbp rt`` in a child
process and plays the released host against it with the reference's own handler:
``__ping``, ``set_runtime_config``, ``list_plugins`` under the legacy bridge binding,
``reconcile_plugin_installations``, ``get_debug_info`` (workspace context), serving
``initialize_plugin_settings`` / ``get_plugin_settings`` when the debug plugin
registers, and the ``apply_plugin_installation`` the host sends for the new debug row.
Then it starts the reference ``lbp run`` for PLUGIN_DIR (a copy), times until the
runtime lists the plugin as initialized, reads idle RSS, and times ``call_tool`` under
the bridge binding, sequentially and in concurrent rounds. Prints one JSON line.
Contexts and payload shapes follow ``shared/reference/wire`` (4.11.2 host).
"""

from __future__ import annotations

import asyncio
import enum
import hashlib
import json
import logging
import os
import shutil
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from langbot_plugin.entities.io.resp import ActionResponse
from langbot_plugin.runtime.io.handler import Handler

# bench/procs.py is standard library only; the bench folder (not the repository root,
# which holds our package) is appended to the path so it never shadows the reference.
sys.path.append(str(Path(__file__).resolve().parent.parent))
from procs import (
    cpu_seconds,
    free_port,
    one_line_error,
    print_outcome,
    serve_bursts,
    stop_process,
    tree_rss_mb,
    wait_port,
)


class Act(enum.Enum):
    PING = "__ping"
    SET_RUNTIME_CONFIG = "set_runtime_config"
    LIST_PLUGINS = "list_plugins"
    RECONCILE = "reconcile_plugin_installations"
    GET_DEBUG_INFO = "get_debug_info"
    APPLY = "apply_plugin_installation"
    CALL_TOOL = "call_tool"


IDENTITY = ("bench", "echotool")
TOOL = "echo_tool"
ROLES = ("host", "runtime", "plugin")
MAX_INFLIGHT = 128
WORKER_POLICY = {
    "max_cpus": 1.0,
    "max_memory_mb": 512,
    "max_pids": 128,
    "max_open_files": 256,
    "max_file_size_mb": 512,
    "max_workers": 16,
    "max_total_cpus": 8.0,
    "max_total_memory_mb": 8192,
    "max_installations": 10000,
    "max_concurrent_restarts": 1,
    "restart_failure_threshold": 8,
    "restart_failure_window_seconds": 30.0,
    "restart_circuit_open_seconds": 60.0,
    "require_hard_limits": False,
}


class Workspace:
    """The OSS scopes the host uses: workspace context and the legacy bridge binding."""

    def __init__(self) -> None:
        self.workspace_uuid = str(uuid.uuid4())
        self.instance_uuid = f"instance_{self.workspace_uuid}"
        seed = f"langbot:oss-plugin-bridge:{self.instance_uuid}:{self.workspace_uuid}"
        self.workspace = {
            "instance_uuid": self.instance_uuid,
            "workspace_uuid": self.workspace_uuid,
            "placement_generation": 1,
        }
        self.bridge = {
            **self.workspace,
            "installation_uuid": str(uuid.uuid5(uuid.NAMESPACE_URL, seed)),
            "runtime_revision": 1,
            "artifact_digest": hashlib.sha256(seed.encode()).hexdigest(),
        }
        # plugin_settings rows, as the host's DB would keep them.
        self.settings: dict[tuple[str, str], dict[str, Any]] = {}


class HostHandler(Handler):
    """The host end of the control connection: serves what the runtime asks of LangBot."""

    name = "BenchHost"

    def __init__(self, conn: Any, ws: Workspace) -> None:
        super().__init__(conn)
        self.ws = ws

        async def initialize_plugin_settings(data: dict[str, Any]) -> ActionResponse:
            key = (data["plugin_author"], data["plugin_name"])
            row = ws.settings.get(key)
            if row is None:
                row = ws.settings[key] = {
                    "enabled": True,
                    "priority": 0,
                    "plugin_config": {},
                    "install_source": data.get("install_source", "debug"),
                    "install_info": data.get("install_info") or {},
                    "installation_uuid": str(uuid.uuid4()),
                    "runtime_revision": 1,
                    "artifact_digest": hashlib.sha256(
                        f"pending:{uuid.uuid4()}".encode()
                    ).hexdigest(),
                }
            return ActionResponse.success({})

        async def get_plugin_settings(data: dict[str, Any]) -> ActionResponse:
            key = (data["plugin_author"], data["plugin_name"])
            row = ws.settings.get(key) or {
                "enabled": True,
                "priority": 0,
                "plugin_config": {},
                "install_source": "local",
                "install_info": {},
                "installation_uuid": None,
                "runtime_revision": None,
                "artifact_digest": None,
            }
            return ActionResponse.success(dict(row))

        async def get_langbot_version(data: dict[str, Any]) -> ActionResponse:
            return ActionResponse.success({"version": "v4.11.2", "api_features": []})

        self.actions["initialize_plugin_settings"] = initialize_plugin_settings
        self.actions["get_plugin_settings"] = get_plugin_settings
        self.actions["get_langbot_version"] = get_langbot_version


async def handshake(host: HostHandler) -> None:
    ws = host.ws
    await host.call_action(Act.PING, {}, timeout=10)
    await host.call_action(
        Act.SET_RUNTIME_CONFIG,
        {
            "runtime_identity": {
                "instance_uuid": ws.instance_uuid,
                "runtime_id": f"{ws.instance_uuid}:plugin-runtime",
            },
            "worker_policy": WORKER_POLICY,
            "runtime_profile": "oss_dev",
            "cloud_service_url": "https://space.langbot.app",
        },
        timeout=10,
    )
    await host.call_action(Act.LIST_PLUGINS, {}, timeout=10, action_context=ws.bridge)
    result = await host.call_action(Act.RECONCILE, {"installations": []}, timeout=300)
    if result.get("missing_artifacts"):
        raise RuntimeError(f"reconcile reported {result!r}")


async def listed(host: HostHandler) -> bool:
    data = await host.call_action(Act.LIST_PLUGINS, {}, timeout=10, action_context=host.ws.bridge)
    for plugin in data["plugins"]:
        metadata = plugin["manifest"]["manifest"]["metadata"]
        if (metadata["author"], metadata["name"]) == IDENTITY and plugin["status"] == "initialized":
            return True
    return False


async def wait_listed(
    host: HostHandler,
    present: bool,
    plugin: asyncio.subprocess.Process,
    timeout: float = 60.0,
) -> None:
    deadline = time.monotonic() + timeout
    while await listed(host) != present:
        if present and plugin.returncode is not None:
            raise RuntimeError(f"reference lbp run exited {plugin.returncode}")
        if time.monotonic() > deadline:
            raise TimeoutError(f"plugin {'never appeared' if present else 'never left'}")
        await asyncio.sleep(0.002)


def session_payload(ws: Workspace) -> dict[str, Any]:
    now = time.time()
    return {
        **ws.workspace,
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
    ws = host.ws
    out: dict[str, Any] = {}
    await handshake(host)
    info = await host.call_action(Act.GET_DEBUG_INFO, {}, timeout=10, action_context=ws.workspace)
    plugin_dir = work / "echotool"
    shutil.copytree(plugin_src, plugin_dir)
    (plugin_dir / ".env").write_text(
        f"DEBUG_RUNTIME_WS_URL=ws://127.0.0.1:{debug_port}/plugin/debug/ws\n"
        f"PLUGIN_DEBUG_KEY={info['plugin_debug_key']}\n"
    )
    plugin_log = (work / "plugin.log").open("wb")
    plugin: asyncio.subprocess.Process | None = None
    try:
        spawn: list[float] = []
        spawn_cpu: list[float] = []
        for round_ in range(plan["spawn_rounds"]):
            t0 = time.perf_counter()
            plugin = await asyncio.create_subprocess_exec(
                lbp,
                "run",
                cwd=plugin_dir,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=plugin_log,
                stderr=plugin_log,
            )
            await wait_listed(host, True, plugin)
            spawn.append(time.perf_counter() - t0)
            spawn_cpu.append(cpu_seconds(plugin.pid))
            if round_ == 0:
                # The host syncs the new debug row with the runtime on its next request.
                row = ws.settings[IDENTITY]
                binding = {
                    **ws.workspace,
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
            if round_ < plan["spawn_rounds"] - 1:
                await stop_process(plugin, grace=5.0)
                await wait_listed(host, False, plugin)
        out["spawn"] = spawn
        out["spawn_cpu"] = spawn_cpu
        assert plugin is not None

        await asyncio.sleep(plan["idle_seconds"])
        out["rss"] = {"runtime": tree_rss_mb(rt_pid), "plugin": tree_rss_mb(plugin.pid)}

        session = session_payload(ws)
        counter = iter(range(10**9))

        async def call() -> None:
            n = next(counter)
            data = await host.call_action(
                Act.CALL_TOOL,
                {
                    "tool_name": TOOL,
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

        for _ in range(plan["warmup"]):
            await call()
        samples = []
        pids = (os.getpid(), rt_pid, plugin.pid)
        cpu_before = [cpu_seconds(pid) for pid in pids]
        for _ in range(plan["calls"]):
            t0 = time.perf_counter()
            await call()
            samples.append(time.perf_counter() - t0)
        out["call"] = samples
        out["call_cpu"] = {
            who: (cpu_seconds(pid) - before) / plan["calls"]
            for who, pid, before in zip(ROLES, pids, cpu_before, strict=True)
        }

        # Same protocol as ours: gated rounds (<= MAX_INFLIGHT on the wire), then one
        # ungated burst.
        gate = asyncio.Semaphore(MAX_INFLIGHT)

        async def gated_call() -> None:
            async with gate:
                await call()

        async def burst(fn: Any) -> dict[str, Any]:
            t0 = time.perf_counter()
            results = await asyncio.gather(
                *(fn() for _ in range(plan["concurrent"])), return_exceptions=True
            )
            elapsed = time.perf_counter() - t0
            errors = [r for r in results if isinstance(r, BaseException)]
            if errors:
                out.setdefault("error_sample", one_line_error(errors[0]))
            return {"elapsed": elapsed, "calls": plan["concurrent"], "errors": len(errors)}

        if plan.get("paired_bursts"):
            out["bursts"] = await serve_bursts(lambda: burst(gated_call), pids)
            return out
        out["concurrent"] = [await burst(gated_call) for _ in range(plan["concurrent_rounds"])]
        out["ungated"] = await burst(call)
    finally:
        if plugin is not None:
            await stop_process(plugin, grace=5.0)
    return out


#: ``drive(host, plan, *, plugin_src, work, debug_port, lbp, rt_pid)``: what a driver
#: measures once the reference ``lbp rt`` is up and connected (this module's and
#: ``curve_driver.py``'s).
Drive = Callable[..., Awaitable[dict[str, Any]]]


async def measure(
    plugin_src: Path, plan: dict[str, Any], work: Path, drive: Drive
) -> dict[str, Any]:
    """Starts the reference ``lbp rt``, plays its host and runs ``drive`` once connected."""
    from langbot_plugin.runtime.io.controllers.ws.client import WebSocketClientController

    lbp = str(Path(sys.executable).parent / "lbp")
    control, debug = free_port(), free_port()
    log = (work / "rt.log").open("wb")
    rt = await asyncio.create_subprocess_exec(
        lbp,
        "rt",
        "--ws-control-port",
        str(control),
        "--ws-debug-port",
        str(debug),
        "--skip-deps-check",
        cwd=work,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=log,
        stderr=log,
    )
    result: dict[str, Any] = {}
    failure: list[BaseException | None] = []
    try:
        await wait_port(control, timeout=60.0)

        async def on_connection(conn: Any) -> None:
            host = HostHandler(conn, Workspace())
            runner = asyncio.create_task(host.run())
            try:
                result.update(
                    await drive(
                        host,
                        plan,
                        plugin_src=plugin_src,
                        work=work,
                        debug_port=debug,
                        lbp=lbp,
                        rt_pid=rt.pid,
                    )
                )
            except BaseException as exc:
                failure.append(exc)
            finally:
                runner.cancel()

        async def failed(_controller: Any, exc: BaseException | None) -> None:
            failure.append(exc)

        await WebSocketClientController(f"ws://127.0.0.1:{control}/control/ws", failed).run(
            on_connection
        )
    finally:
        await stop_process(rt, grace=5.0)
    if failure:
        raise RuntimeError(f"reference driver failed: {failure[0]!r}") from failure[0]
    return result


def main(argv: list[str], drive: Drive = drive) -> int:
    """``PLUGIN_DIR PLAN_JSON``: one measurement by ``drive``, printed as one JSON line."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    plugin_src = Path(argv[0]).resolve()
    plan = json.loads(argv[1])
    work = Path(tempfile.mkdtemp(prefix="lbp-bench-ref-"))
    os.chdir(work)  # the reference keeps ./data next to it
    try:
        return print_outcome(lambda: asyncio.run(measure(plugin_src, plan, work, drive)), logs=work)
    finally:
        os.chdir("/")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
