"""The Box runtime at the reference's module paths, as LangBot's own tests use it.

A host's subclass of ``BaseSandboxBackend`` (here one that runs real ``sh`` processes in the
session's directory) plugged into ``BoxRuntime(logger=..., backends=[...])`` serves
sessions through the one runtime underneath; ``BoxServerHandler`` serves that runtime over
a connection with the Box's tenancy; the Box's own backends plug in under their reference
names (nsjail, real); and a host that only talks to a Box loads none of it.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import logging
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest

from langbot_plugin.box.backend import BaseSandboxBackend
from langbot_plugin.box.client import ActionRPCBoxClient
from langbot_plugin.box.errors import (
    BoxBackendUnavailableError,
    BoxError,
    BoxSessionConflictError,
    BoxSessionNotFoundError,
)
from langbot_plugin.box.models import (
    BoxExecutionResult,
    BoxExecutionStatus,
    BoxSessionInfo,
    BoxSpec,
)
from langbot_plugin.box.nsjail_backend import NsjailBackend
from langbot_plugin.box.runtime import BoxRuntime
from langbot_plugin.box.server import BoxGenerationFence, BoxServerHandler
from langbot_plugin.entities.io.context import ActionContext
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.runtime.io.connection import TransportConnection
from langbot_plugin.runtime.io.handler import Handler
from tests.box.helpers import jail_state, require_nsjail

LOG = logging.getLogger("test.box.faces")
CONTEXT = ActionContext(instance_uuid="instance-a", workspace_uuid="ws-a", placement_generation=1)


class ShellBackend(BaseSandboxBackend):
    """A host's own backend: each session is a directory, each command a real ``sh``."""

    def __init__(self, root: Path, *, available: bool = True) -> None:
        super().__init__(LOG)
        self.name = "shell"
        self.root = root
        self.available = available
        self.started: list[BoxSpec] = []
        self.stopped: list[str] = []

    async def is_available(self) -> bool:
        return self.available

    async def start_session(self, spec: BoxSpec) -> BoxSessionInfo:
        self.started.append(spec)
        (self.root / spec.session_id).mkdir(parents=True, exist_ok=True)
        now = dt.datetime.now(dt.UTC)
        return BoxSessionInfo(
            session_id=spec.session_id,
            backend_name=self.name,
            backend_session_id=str(self.root / spec.session_id),
            image=spec.image,
            network=spec.network,
            host_path=spec.host_path,
            cpus=spec.cpus,
            created_at=now,
            last_used_at=now,
        )

    async def exec(self, session: BoxSessionInfo, spec: BoxSpec) -> BoxExecutionResult:
        done = await anyio.run_process(
            ["sh", "-c", spec.cmd], cwd=session.backend_session_id, check=False
        )
        return BoxExecutionResult(
            session_id=session.session_id,
            backend_name=self.name,
            status=BoxExecutionStatus.COMPLETED,
            exit_code=done.returncode,
            stdout=done.stdout.decode(),
            stderr=done.stderr.decode(),
            duration_ms=0,
        )

    async def stop_session(self, session: BoxSessionInfo) -> None:
        self.stopped.append(session.session_id)


def test_the_runtime_is_built_and_configured_without_an_event_loop(tmp_path: Path) -> None:
    runtime = BoxRuntime(logger=LOG, backends=[ShellBackend(tmp_path)], session_ttl_sec=300)
    runtime.init({"local": {"host_root": str(tmp_path / "box")}})
    assert runtime.get_sessions() == []
    assert runtime.session_ttl_sec == 300
    assert runtime.core.default_workspace == str(tmp_path / "box" / "default")


@pytest.mark.anyio
async def test_a_subclassed_backend_serves_sessions_through_the_runtime(tmp_path: Path) -> None:
    backend = ShellBackend(tmp_path / "sessions")
    runtime = BoxRuntime(logger=LOG, backends=[backend], session_ttl_sec=300)
    await runtime.initialize()
    try:
        first = await runtime.execute(BoxSpec(cmd="echo one > f; pwd", session_id="s1"))
        second = await runtime.execute(BoxSpec(cmd="cat f", session_id="s1"))
        assert (first.exit_code, second.stdout) == (0, "one\n")
        assert first.stdout.strip().endswith("/sessions/s1")
        assert [spec.session_id for spec in backend.started] == ["s1"]
        with pytest.raises(BoxSessionConflictError):
            await runtime.execute(BoxSpec(cmd="true", session_id="s1", cpus=2.0))
        assert [s["session_id"] for s in runtime.get_sessions()] == ["s1"]
        status = await runtime.get_status()
        assert (status["backend"]["name"], status["active_sessions"]) == ("shell", 1)
        await runtime.delete_session("s1")
        assert backend.stopped == ["s1"]
        with pytest.raises(BoxSessionNotFoundError):
            await runtime.delete_session("s1")
    finally:
        await runtime.shutdown()


@pytest.mark.anyio
async def test_an_unavailable_backend_fails_closed(tmp_path: Path) -> None:
    runtime = BoxRuntime(logger=LOG, backends=[ShellBackend(tmp_path, available=False)])
    info = await runtime.get_backend_info()
    assert (info["name"], info["available"]) == (None, False)
    with pytest.raises(BoxBackendUnavailableError):
        await runtime.execute(BoxSpec(cmd="true", session_id="s"))


@pytest.mark.anyio
async def test_the_server_handler_serves_tenants_and_retires_old_generations(
    tmp_path: Path,
) -> None:
    backend = ShellBackend(tmp_path)
    runtime = BoxRuntime(logger=LOG, backends=[backend], session_ttl_sec=300)
    ours, theirs = memory_pair()
    server = BoxServerHandler(
        TransportConnection(theirs),
        runtime,
        host_control_authenticated=True,
        trusted_instance_uuid=CONTEXT.instance_uuid,
        generation_fence=BoxGenerationFence(),
    )
    host = Handler(TransportConnection(ours))
    client = ActionRPCBoxClient(logger=LOG)
    client.set_handler(host)
    newer = CONTEXT.model_copy(update={"placement_generation": 2})
    spec = BoxSpec(cmd="echo hi", session_id="shared")
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run)
        tg.start_soon(host.run)
        result = await client.execute(spec, action_context=CONTEXT)
        assert (result.session_id, result.stdout) == ("shared", "hi\n")
        await client.execute(spec, action_context=newer)
        first, second = (s.session_id for s in backend.started)
        assert first != second  # one sandbox per placement generation
        assert backend.stopped == [first]  # the older placement's session is gone
        sessions = await client.get_sessions(action_context=newer)
        assert [s["session_id"] for s in sessions] == ["shared"]
        with pytest.raises(BoxError, match="Stale Box placement generation"):
            await client.execute(spec, action_context=CONTEXT)
        await host.close()
        await server.close()
    await runtime.shutdown()


@pytest.mark.anyio
async def test_an_unauthenticated_connection_is_refused(tmp_path: Path) -> None:
    runtime = BoxRuntime(logger=LOG, backends=[ShellBackend(tmp_path)])
    ours, theirs = memory_pair()
    server = BoxServerHandler(
        TransportConnection(theirs),
        runtime,
        host_control_authenticated=False,
        trusted_instance_uuid=CONTEXT.instance_uuid,
    )
    host = Handler(TransportConnection(ours))
    client = ActionRPCBoxClient(logger=LOG)
    client.set_handler(host)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run)
        tg.start_soon(host.run)
        with pytest.raises(BoxError, match="authentication is required"):
            await client.get_backend_info()
        await host.close()
        await server.close()


@pytest.fixture
def jail_root() -> Iterator[Path]:
    yield from jail_state("lbp-box-faces-")


@pytest.mark.anyio
async def test_the_box_own_backend_serves_under_its_reference_name(jail_root: Path) -> None:
    require_nsjail()
    runtime = BoxRuntime(logger=LOG, backends=[NsjailBackend(LOG)])
    runtime.init({"state_dir": str(jail_root / "state")})
    info = await runtime.get_backend_info()
    assert info["available"], info
    try:
        result = await runtime.execute(BoxSpec(cmd="echo jailed", session_id="j1"))
        assert (result.backend_name, result.stdout) == ("nsjail", "jailed\n")
    finally:
        await runtime.shutdown()


def test_a_host_that_only_talks_to_a_box_loads_no_daemon_code() -> None:
    script = (
        "import sys\n"
        "import langbot_plugin.box.client, langbot_plugin.box.models, langbot_plugin.box.errors\n"
        "import langbot_plugin.box.security, langbot_plugin.box.tenancy\n"
        "import langbot_plugin.box.actions, langbot_plugin.runtime.io.handler\n"
        "daemon = ('box_runtime.runtime', 'box_runtime.service', 'box_runtime.server',\n"
        "          'box_runtime.backends', 'langbot_plugin.box.runtime')\n"
        "print(sorted(m for m in sys.modules if m.startswith(daemon)))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, check=True, timeout=60
    )
    assert done.stdout.strip() == "[]"


def test_asyncio_runner_cancels_an_initialized_runtime_cleanly(tmp_path: Path) -> None:
    """A runtime initialized and never shut down (as many host tests leave it) ends with
    the loop: its sessions are stopped, nothing is left pending."""
    backend = ShellBackend(tmp_path)

    async def main() -> None:
        runtime = BoxRuntime(logger=LOG, backends=[backend])
        await runtime.initialize()
        await runtime.execute(BoxSpec(cmd="true", session_id="left"))

    asyncio.run(main())
    assert backend.stopped == ["left"]
