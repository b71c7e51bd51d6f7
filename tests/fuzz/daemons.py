"""The daemons under fuzz, as real processes: ``lbp rt`` with a plugin worker, ``lbp box``.

Each is started as the host starts it, with its stderr read line by line (a traceback
there is a finding), and a well-behaved client beside the fuzzer: the host's
:class:`PluginRuntimeClient` (which installs the plugin under test and answers the
runtime's calls) or the Box's :class:`BoxClient`. :func:`rss_kib` reads a process's
resident memory for the long runs' figures.
"""

from __future__ import annotations

import re
import subprocess
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from anyio.abc import Process

from box_runtime.child import start_box
from box_runtime.client import BoxClient, relay_headers, relay_url
from langbot_plugin.host import LocalHost, PluginRuntimeClient, ScriptedModel
from langbot_plugin.host.runtime_client import default_workspace
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import NotFoundError
from tests.box.helpers import jail_state
from tests.e2e.processes import ECHO_PLUGIN, command_context
from tests.e2e.stderr_lines import StderrLines, logged_runtime
from tests.fuzz.seeds import Ids
from tests.support.pypi import package

__all__ = [
    "BoxUnderFuzz",
    "RuntimeUnderFuzz",
    "box_under_fuzz",
    "rss_kib",
    "runtime_under_fuzz",
    "tracebacks",
]

PLUGIN_EXTRA = Path(__file__).resolve().parent / "plugin"
#: The LangBot instance and workspace the fuzzed daemons serve.
WORKSPACE = default_workspace("5f0c0de5-1a2b-4c3d-8e9f-0a1b2c3d4e5f")
#: The workspace of the Box's well-behaved client and of the relayed process: another
#: one than the fuzzed frames name, whose placement generation they may move on.
BOX_TENANT = {
    **WORKSPACE.workspace_context(),
    "workspace_uuid": "7a1e0c55-0d2e-4f3a-9b8c-1d2e3f4a5b6c",
}
_TRACEBACK = re.compile(r"Traceback \(most recent call last\)")


def tracebacks(lines: StderrLines) -> list[str]:
    """Each traceback in a daemon's stderr, with the lines around it."""
    found: list[str] = []
    for index, line in enumerate(lines.lines):
        if _TRACEBACK.search(line):
            found.append("\n".join(lines.lines[max(0, index - 3) : index + 30]))
    return found


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (0 once it is gone)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return 0
    match = re.search(r"^VmRSS:\s+(\d+)", status, re.MULTILINE)
    return int(match.group(1)) if match else 0


def fuzz_plugin() -> bytes:
    """The echo plugin with the ``fz`` command added (see ``tests/fuzz/plugin``)."""
    extra = {
        f"components/commands/{path.name}": path.read_bytes()
        for path in PLUGIN_EXTRA.iterdir()
        if path.suffix in (".py", ".yaml")
    }
    return package(ECHO_PLUGIN, extra)


@dataclass
class RuntimeUnderFuzz:
    process: Process
    stderr: StderrLines
    host: PluginRuntimeClient
    binding: ActionScope
    control_port: int
    debug_port: int
    reinstalls: int = 0
    _lock: anyio.Lock = field(default_factory=anyio.Lock)

    @property
    def ids(self) -> Ids:
        return Ids(
            instance_uuid=str(self.binding.instance_uuid),
            workspace_uuid=str(self.binding.workspace_uuid),
            installation_uuid=str(self.binding.installation_uuid),
            artifact_digest=str(self.binding.artifact_digest),
        )

    async def _reinstall(self) -> None:
        """Install the plugin again; the host takes the runtime back first (a fuzzed
        connection may be the one the runtime asks for the plugin's settings)."""
        result = None
        for _ in range(3):  # a fuzzed connection may take the runtime back meanwhile
            await self.host.handshake()
            _, result = await self.host.install_package(
                fuzz_plugin(), installation_uuid=str(self.binding.installation_uuid)
            )
            if result.state == "running":
                self.reinstalls += 1
                return
        raise AssertionError(f"the plugin could not be installed again: {result}")

    async def command(self, text: str) -> list[dict[str, object]]:
        return await self.host.execute_command(command_context(text), scope=self.binding)

    async def worker_pid(self) -> str:
        return str((await self.command("fz pid"))[0]["text"])

    async def alive(self) -> None:
        """The liveness call: the runtime answers, and so does the plugin's worker.

        A fuzzed lifecycle frame may remove the plugin, as it should (``delete_plugin``
        without a context addresses every plugin), even between two steps of this
        call: it is installed again, under its installation id, and counted in
        :attr:`reinstalls`."""
        assert self.process.returncode is None, "lbp rt exited"
        async with self._lock:  # two fuzzed connections may find it gone at once
            for attempt in range(3):
                if not await self.host.list_plugins(self.binding):
                    await self._reinstall()
                try:
                    replies = await self.command("hello fuzz")
                except NotFoundError as exc:  # say what became of the plugin
                    plugins = await self.host.list_plugins(self.binding)
                    if not plugins and attempt < 2:
                        continue  # removed meanwhile by a fuzzed frame
                    seen = [(p.identity, p.status, p.enabled, p.debug) for p in plugins]
                    raise AssertionError(f"{exc!r}; the plugins in its scope: {seen}") from None
                assert replies[0]["text"] == "hello, fuzz", replies
                return


@asynccontextmanager
async def runtime_under_fuzz(tmp: Path) -> AsyncGenerator[RuntimeUnderFuzz]:
    """``lbp rt`` with the fuzz plugin installed (one worker), its host connected."""
    local = LocalHost(models={"m1": ScriptedModel(lambda msgs: f"FAKE: {msgs[-1]['content']}")})
    async with (
        logged_runtime(tmp) as (runtime, stderr),
        runtime.host(local, workspace=WORKSPACE) as host,
    ):
        binding, result = await host.install_package(fuzz_plugin())
        assert result.state == "running", result
        yield RuntimeUnderFuzz(
            runtime.process, stderr, host, binding, runtime.control_port, runtime.debug_port
        )


@dataclass
class BoxUnderFuzz:
    process: Process
    stderr: StderrLines
    client: BoxClient
    port: int
    instance_id: str
    relay_session: str = "relay-fz"
    relay_process: str = "echo"

    @property
    def ids(self) -> Ids:
        return Ids(instance_uuid=self.instance_id, workspace_uuid=str(WORKSPACE.workspace_uuid))

    @property
    def rpc_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/rpc/ws"

    @property
    def relay_url(self) -> str:
        return relay_url(f"ws://127.0.0.1:{self.port}", self.relay_session, self.relay_process)

    def relay_headers(self) -> dict[str, str]:
        return relay_headers(instance_id=self.instance_id, context=BOX_TENANT)

    async def alive(self) -> None:
        assert self.process.returncode is None, "lbp box exited"
        await self.client.status()


@asynccontextmanager
async def box_under_fuzz(tmp: Path, backend: str) -> AsyncGenerator[BoxUnderFuzz]:
    """``lbp box`` on ``backend`` with a running managed process (``cat``) to relay to."""
    roots = jail_state("lbp-fuzz-box-")  # the jail user must reach the sessions' folders
    root = next(roots)
    config = {
        "backend": backend,
        "state_dir": str(root / "state"),
        "local": {"allowed_mount_roots": [str(root / "mounts")]},
    }
    instance = str(WORKSPACE.instance_uuid)
    # stderr is read until the child has stopped (its shutdown lines count too)
    async with (
        anyio.create_task_group() as tg,
        start_box("--host", "127.0.0.1", config=config, cwd=tmp, log=subprocess.PIPE) as child,
    ):
        assert child.process.stderr is not None
        stderr = StderrLines(child.process.stderr)
        tg.start_soon(stderr.pump)
        async with child.client(instance_id=instance, context=BOX_TENANT) as client:
            box = BoxUnderFuzz(child.process, stderr, client, child.port, instance)
            try:
                await client.create_session(session_id=box.relay_session, persistent=True)
                await client.start_managed_process(
                    box.relay_session, {"process_id": box.relay_process, "command": "cat"}
                )
                yield box
            finally:
                roots.close()
