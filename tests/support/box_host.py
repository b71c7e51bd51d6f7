"""A real Box (Docker or nsjail, served on a local port) behind the host machinery.

:func:`box_host` starts the Box runtime in-process on the chosen backend, serves it on
127.0.0.1 (``/rpc/ws``), connects the Box's own client and yields a :class:`BoxHost`: a
:class:`LocalHost` whose run machinery exports through that client, with a
``sandbox_exec`` host tool that runs a command in the run's Box session (how a runner
writes files there). :class:`CountingBox` is the real client, counting the reads it
sends (to show that a refusal happened before the Box was asked).
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from box_runtime.client import BoxClient
from box_runtime.export import ExportedFile
from box_runtime.runtime import BoxRuntime
from langbot_plugin.host import HostTool, LocalHost
from langbot_plugin.host.run_host import RunHost
from tests.box.helpers import CONTEXT, jail_state, remove_containers, require, served_box

__all__ = ["SESSION", "BoxHost", "CountingBox", "box_host"]

SESSION = "s1"
BUSYBOX = "lbp-test-busybox:latest"


class CountingBox(BoxClient):
    """The Box's client, counting the ``box_read_files`` calls it sends."""

    reads = 0

    async def read_files(
        self, session_id: str, paths: Sequence[str], *, run_id: str | None = None
    ) -> list[ExportedFile]:
        self.reads += 1
        return await super().read_files(session_id, paths, run_id=run_id)


@dataclass
class BoxHost:
    backend: str
    box: CountingBox
    local: LocalHost
    #: The test's directory; ``root / "mounts"`` is a mount source the Box allows.
    root: Path

    async def sh(self, command: str) -> str:
        """Run ``command`` in the session; its stdout (fails on a non-zero exit)."""
        result = await self.box.exec(session_id=SESSION, cmd=command, timeout_sec=60)
        assert result.ok, (command, result.stderr)
        return result.stdout


def _config(backend: str, root: Path, deployment: str) -> dict[str, Any]:
    local: dict[str, Any] = {"allowed_mount_roots": [str(root / "mounts")]}
    config: dict[str, Any] = {"backend": backend, "state_dir": str(root / "state"), "local": local}
    if backend == "docker":
        local["image"] = BUSYBOX
        config["deployment_id"] = deployment
        config["docker"] = {"pull_missing_images": False}
    return config


@asynccontextmanager
async def box_host(backend: str) -> AsyncGenerator[BoxHost]:
    """A served Box on ``backend`` (``docker`` or ``nsjail``) and a host exporting from it."""
    require(backend)
    deployment = "t" + secrets.token_hex(5)
    roots = jail_state("lbp-export-host-")
    root = next(roots)
    try:
        runtime = BoxRuntime(config=_config(backend, root, deployment), environ={}, cwd=str(root))
        async with (
            runtime.running(),
            served_box(runtime) as served,
            CountingBox.connect(served.url, instance_id="inst-1", context=CONTEXT) as client,
        ):
            assert isinstance(client, CountingBox)
            local = LocalHost(runs=RunHost(box=client))
            host = BoxHost(backend, client, local, root)

            async def sandbox_exec(parameters: dict[str, Any]) -> dict[str, Any]:
                return {"stdout": await host.sh(str(parameters["command"]))}

            local.add_tool(HostTool("sandbox_exec", sandbox_exec, "run a command in the Box"))
            await host.sh("mkdir -p /workspace/outbox")
            yield host
    finally:
        if backend == "docker":
            remove_containers(deployment)
        roots.close()
