"""A served Box on a real backend with the MCP test server ready to start in ``mcp-shared``.

The server (``mcp_fixture/echo_server.py``, built on the ``mcp`` package's server API)
and the ``mcp`` package itself (``tests/support/mcp_vendor.py``) are mounted read-only
into the session; clients speak MCP to it through the relay with ``mcp.ClientSession``.
"""

from __future__ import annotations

import secrets
import shutil
import tempfile
from collections.abc import AsyncGenerator, Generator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mcp import ClientSession

from box_runtime.client import BoxClient, relay_headers, relay_url
from box_runtime.process_models import ManagedProcessInfo
from box_runtime.runtime import BoxRuntime
from tests.support.mcp_vendor import vendor_dir
from tests.support.mcp_ws import FrameLog, relay_transport

from .helpers import CONTEXT, Served, remove_containers, require, served_box

__all__ = [
    "BACKENDS",
    "RELAY_BACKENDS",
    "McpBox",
    "box_config",
    "mcp_box",
    "remove_containers",
    "require",
    "scratch_dir",
]

BACKENDS = ("docker", "nsjail", "host")
#: The relay tests also run on E2B (the real SDK against the local stand-in).
RELAY_BACKENDS = (*BACKENDS, "e2b")
FIXTURE = Path(__file__).parent / "mcp_fixture"
TOKEN = "m" * 40
SERVER = "/opt/fixture/echo_server.py"
VENDOR = "/opt/mcp"


@contextmanager
def scratch_dir() -> Generator[Path]:
    """A state directory the jail user can pass through (pytest's tmp_path is 0700)."""
    root = Path(tempfile.mkdtemp(prefix="lbp-mcp-test-", dir="/tmp"))
    root.chmod(0o711)
    (root / "mounts").mkdir(mode=0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


@dataclass
class McpBox:
    served: Served
    client: BoxClient
    backend: str

    @property
    def runtime(self) -> BoxRuntime:
        return self.served.runtime

    def url(self, process_id: str) -> str:
        return relay_url(f"ws://127.0.0.1:{self.served.port}", "mcp-shared", process_id)

    @property
    def headers(self) -> dict[str, str]:
        return relay_headers(token=TOKEN, instance_id="inst-1", context=CONTEXT)

    async def start(self, process_id: str = "echo", **spec: Any) -> ManagedProcessInfo:
        fields: dict[str, Any] = {
            "process_id": process_id,
            "command": "python3",
            "args": [SERVER],
            "env": {"PYTHONPATH": VENDOR, "PYTHONDONTWRITEBYTECODE": "1"},
            **spec,
        }
        return await self.client.start_managed_process("mcp-shared", fields)

    @asynccontextmanager
    async def mcp(
        self, process_id: str = "echo", log: FrameLog | None = None
    ) -> AsyncGenerator[ClientSession]:
        async with (
            relay_transport(self.url(process_id), self.headers, log) as (read, write),
            ClientSession(read, write) as session,
        ):
            await session.initialize()
            yield session


def box_config(backend: str, state: Path, deployment: str) -> dict[str, Any]:
    roots = [str(state / "mounts"), str(vendor_dir().parent)]
    config: dict[str, Any] = {
        "backend": backend,
        "deployment_id": deployment,
        "state_dir": str(state / "state"),
        "local": {"allowed_mount_roots": roots, "image": "lbp-test-python:latest"},
        "docker": {"pull_missing_images": False},
        "host": {"allow_unsandboxed": True},
    }
    if backend == "e2b":
        from tests.support.e2b_standin.thread import shared_standin

        # The vendored mcp package holds a compiled module above the 10 MiB default.
        config["e2b"] = {**shared_standin().connection(), "sync_max_file_mb": 64}
        config["local"]["image"] = ""  # the template's default
    return config


@asynccontextmanager
async def mcp_box(backend: str, **session: Any) -> AsyncGenerator[McpBox]:
    """A served Box on ``backend`` with the persistent ``mcp-shared`` session created."""
    require(backend)
    deployment = "m" + secrets.token_hex(5)
    with scratch_dir() as state:
        fixture = state / "mounts" / "fixture"
        shutil.copytree(FIXTURE, fixture)
        for path in [fixture, *fixture.rglob("*")]:
            path.chmod(0o755 if path.is_dir() else 0o644)
        runtime = BoxRuntime(
            config=box_config(backend, state, deployment), environ={}, cwd=str(state)
        )
        try:
            async with (
                served_box(runtime, token=TOKEN) as served,
                BoxClient.connect(
                    served.url, token=TOKEN, instance_id="inst-1", context=CONTEXT
                ) as client,
            ):
                await client.create_session(
                    session_id="mcp-shared",
                    persistent=True,
                    read_only_rootfs=False,
                    extra_mounts=[
                        {"host_path": str(vendor_dir()), "mount_path": VENDOR, "mode": "ro"},
                        {"host_path": str(fixture), "mount_path": "/opt/fixture", "mode": "ro"},
                    ],
                    **session,
                )
                yield McpBox(served, client, backend)
                await client.delete_session("mcp-shared")
        finally:
            if backend == "docker":
                remove_containers(deployment)
