"""Explicit export (seed 004): a full batch through the SDK, the host machinery and the Box.

Per backend (nsjail, Docker with the exec agent), one Box runtime served on 127.0.0.1
and one host (``RunHost(box=BoxClient)``); each round writes 20 files of 512 KiB
(10 MiB) in the session (untimed), then times either

* **box**: ``BoxClient.read_files`` of the 20 files alone (the Box's read and the
  ``__file_chunk`` transfer), then the compare-and-delete (``remove_files_if_match``);
* **sdk+host+box**: ``AgentRunAPIProxy.export_box_files`` of the same files, over an
  RPC link to the host, which reads them from the Box, checks the run's limits,
  registers the handles and compare-and-deletes them.

Rounds alternate the two. Prints a Markdown table of medians. The plugin runtime's hop
(a relay of the same call) is not in this figure.
"""

from __future__ import annotations

import secrets
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from functools import partial
from pathlib import Path
from typing import Any

import anyio

from tests.support.as_plugin import AsPlugin

FILES = 20
FILE_BYTES = 512 * 1024
ROUNDS = 9
OWNER = "bench/export"
SESSION = "bench-export"
OUT = "/workspace/outbox"


def _config(backend: str, root: Path) -> dict[str, Any]:
    local: dict[str, Any] = {"allowed_mount_roots": [str(root / "mounts")]}
    config: dict[str, Any] = {"backend": backend, "state_dir": str(root / "state"), "local": local}
    if backend == "docker":
        local["image"] = "lbp-test-busybox:latest"
        config["deployment_id"] = "bx" + secrets.token_hex(4)
        config["docker"] = {"pull_missing_images": False}
    return config


def _prepare_root() -> Path:
    """A scratch directory a jail user can pass through (``/tmp``, not private)."""
    root = Path(tempfile.mkdtemp(prefix="lbp-export-bench-", dir="/tmp"))
    root.chmod(0o711)
    (root / "mounts").mkdir(mode=0o755)
    return root


@asynccontextmanager
async def _served(backend: str) -> AsyncGenerator[Any]:
    from box_runtime.client import BoxClient
    from box_runtime.runtime import BoxRuntime
    from box_runtime.server import ServerOptions, serve

    root = await anyio.to_thread.run_sync(_prepare_root)
    runtime = BoxRuntime(config=_config(backend, root), environ={}, cwd=str(root))
    options = ServerOptions(host="127.0.0.1", port=0, token="")
    try:
        async with runtime.running(), anyio.create_task_group() as tg:
            port = await tg.start(partial(serve, options, runtime, handle_signals=False))
            url = f"ws://127.0.0.1:{port}/rpc/ws"
            context = {"instance_uuid": "i", "workspace_uuid": "w", "placement_generation": 1}
            async with BoxClient.connect(url, instance_id="i", context=context) as client:
                yield client
                await client.delete_session(SESSION)
            tg.cancel_scope.cancel()
    finally:
        shutil.rmtree(root, ignore_errors=True)


async def _write(client: Any) -> list[str]:
    command = (
        f"mkdir -p {OUT} && cd {OUT} && for i in $(seq 1 {FILES}); do "
        f"head -c {FILE_BYTES} /dev/urandom > f$i.bin; done"
    )
    result = await client.exec(session_id=SESSION, cmd=command, timeout_sec=60)
    assert result.ok, result.stderr
    return [f"{OUT}/f{i}.bin" for i in range(1, FILES + 1)]


async def _measure(backend: str) -> dict[str, float]:
    from langbot_plugin.api.entities.builtin.agent_runner.context import AgentRunContext
    from langbot_plugin.api.proxies.agent_run import AgentRunAPIProxy
    from langbot_plugin.host import LocalHost
    from langbot_plugin.host.run_context import make_resources
    from langbot_plugin.host.run_host import RunHost
    from langbot_plugin.rpc import RPCSession
    from langbot_plugin.rpc.transport_memory import memory_pair

    box_times: list[float] = []
    full_times: list[float] = []
    async with _served(backend) as client:
        local = LocalHost(runs=RunHost(box=client))
        host_end, plugin_end = memory_pair()
        async with (
            RPCSession(host_end, local, name="host").running(),
            RPCSession(plugin_end, None, name="plugin").running() as session,
        ):
            for _ in range(ROUNDS):
                paths = await _write(client)
                started = time.perf_counter()
                batch = await client.read_files(SESSION, paths)
                await client.remove_files_if_match(SESSION, [(f.path, f.sha256) for f in batch])
                box_times.append(time.perf_counter() - started)

                paths = await _write(client)
                run = await local.start_run(
                    OWNER,
                    "exporter",
                    "bench",
                    available_apis=["box"],
                    resources=make_resources(tools=["event_reply"]),
                    box_session=SESSION,
                )
                ctx = AgentRunContext.model_validate(run.context)
                api = AgentRunAPIProxy(ctx=ctx, plugin_runtime_handler=AsPlugin(session, OWNER))
                started = time.perf_counter()
                items = await api.export_box_files(paths)
                full_times.append(time.perf_counter() - started)
                assert len(items) == FILES
                assert sum(i.size for i in items) == FILES * FILE_BYTES
                local.runs.registry.finish(run.run_id, "completed")
                local.runs.files.release(run.run_id)
    return {"box": statistics.median(box_times), "full": statistics.median(full_times)}


def _available(backend: str) -> bool:
    if backend == "nsjail":
        from box_runtime.backends.nsjail import find_nsjail

        return find_nsjail("") is not None
    return shutil.which("docker") is not None or Path("/var/run/docker.sock").exists()


async def run() -> dict[str, dict[str, float]]:
    results: dict[str, dict[str, float]] = {}
    for backend in ("nsjail", "docker"):
        if _available(backend):
            results[backend] = await _measure(backend)
    return results


def report(results: dict[str, dict[str, float]]) -> str:
    size = FILES * FILE_BYTES / (1024 * 1024)
    lines = [
        f"Explicit export of {FILES} files, {size:.0f} MiB (median of {ROUNDS} rounds)",
        "",
        "| backend | box read + delete | sdk + host + box | ratio |",
        "|---|---|---|---|",
    ]
    for backend, figures in results.items():
        box, full = figures["box"], figures["full"]
        lines.append(
            f"| {backend} | {box * 1000:.0f} ms | {full * 1000:.0f} ms | {full / box:.2f}x |"
        )
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    del argv
    print(report(anyio.run(run)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
