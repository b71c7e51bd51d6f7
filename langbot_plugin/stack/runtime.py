"""The runtime of a local stack: ``lbp rt`` in this process, or as a child process."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Literal

import anyio
from anyio.abc import Process

from langbot_plugin.host import PluginRuntimeClient
from langbot_plugin.protocol.scope import ActionScope
from langbot_plugin.rpc import Dispatcher
from langbot_plugin.rpc.processes import Log, daemon_child, free_port
from langbot_plugin.rpc.transport_memory import memory_pair
from langbot_plugin.rpc.transport_stdio import child_stdio_transport
from langbot_plugin.runtime.app import CONTROL_PATH, DEBUG_PATH, PluginRuntime
from langbot_plugin.runtime.state import RuntimeOptions

__all__ = [
    "LBP_COMMAND",
    "RuntimeChild",
    "StackError",
    "host_here",
    "runtime_here",
    "start_runtime",
]

#: ``lbp`` as LangBot starts it (this interpreter).
LBP_COMMAND = (sys.executable, "-m", "langbot_plugin.cli.__init__")
#: Seconds ``lbp rt -s`` gets to stop by itself once its stdin closes, and each step after.
STOP_SEC = 10.0


class StackError(RuntimeError):
    """A piece of the local stack did not start (the message says which and why)."""


@asynccontextmanager
async def runtime_here(
    options: RuntimeOptions, *, serve: bool = True
) -> AsyncGenerator[PluginRuntime]:
    """A :class:`PluginRuntime` in this process until the block ends. With ``serve`` its
    servers listen (the debug port ``lbp run`` connects to); without, nothing listens
    and plugins join in memory (:func:`.plugin.plugin_here`)."""
    runtime = PluginRuntime(options)
    async with anyio.create_task_group() as tg:
        if not serve:
            runtime.supervisor.bind(tg)
            try:
                yield runtime
            finally:
                tg.cancel_scope.cancel()
            return
        tg.start_soon(runtime.run)
        await runtime.wait_started()
        try:
            yield runtime
        finally:
            runtime.stop()


@asynccontextmanager
async def host_here(
    runtime: PluginRuntime,
    host: Dispatcher | None,
    *,
    name: str = "host",
    workspace: ActionScope | None = None,
    handshake: bool = True,
) -> AsyncGenerator[PluginRuntimeClient]:
    """``host`` connected to ``runtime`` (in this process) by an in-memory control link;
    the connection is ``name`` in the runtime's logs."""
    host_end, runtime_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(runtime.serve_control, runtime_end, name)
        async with PluginRuntimeClient.over(
            host_end, host, workspace=workspace, handshake=handshake
        ) as client:
            yield client
        tg.cancel_scope.cancel()


@dataclass(slots=True)
class RuntimeChild:
    """A running ``lbp rt`` child."""

    process: Process
    control_port: int
    debug_port: int
    #: its data folder (``--data-dir``, as this process reaches it)
    data: Path
    stdio: bool = False

    @property
    def control_url(self) -> str:
        """Its control WebSocket (not served with ``stdio``)."""
        return f"ws://127.0.0.1:{self.control_port}{CONTROL_PATH}"

    @property
    def debug_url(self) -> str:
        """Where ``lbp run`` connects a plugin under development."""
        return f"ws://127.0.0.1:{self.debug_port}{DEBUG_PATH}"

    @asynccontextmanager
    async def host(
        self,
        host: Dispatcher | None,
        *,
        workspace: ActionScope | None = None,
        token: str | None = None,
        handshake: bool = True,
    ) -> AsyncGenerator[PluginRuntimeClient]:
        """``host`` connected as LangBot connects: over the child's stdio (once) or a
        WebSocket connection to its control port."""
        if not self.stdio:
            async with PluginRuntimeClient.connect(
                self.control_url, host, token=token, workspace=workspace, handshake=handshake
            ) as client:
                yield client
            return
        async with (
            child_stdio_transport(self.process) as transport,
            PluginRuntimeClient.over(
                transport, host, workspace=workspace, handshake=handshake
            ) as client,
        ):
            yield client


@asynccontextmanager
async def start_runtime(
    *args: str,
    data_dir: str | Path | None = "rt-data",
    stdio: bool = False,
    ports: tuple[int, int] | None = None,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] = LBP_COMMAND,
    cwd: str | Path | None = None,
    log: Log = subprocess.DEVNULL,
    stdout: int | IO[bytes] | Literal["log"] | None = "log",
    start_seconds: float = 60.0,
) -> AsyncGenerator[RuntimeChild]:
    """``lbp rt`` as a child (module docstring) on ``ports`` (control, debug; free ones
    unless given), keeping its data in ``data_dir`` (relative to ``cwd``; ``None``: the
    runtime's default, and no ``--data-dir`` flag), with ``args``
    as further flags; ``command`` replaces ``lbp`` (another interpreter, the reference's).
    ``env`` is its whole environment (``None``: this process's). Its stderr (and stdout,
    unless ``stdout`` says where else) goes to ``log``. The start waits until the
    control port accepts connections (``stdio``: nothing to wait for). Leaving the block
    stops it in order; with ``stdio`` it first gets the time to stop by itself."""
    control, debug = ports or (free_port(), free_port())
    serve = ["-s"] if stdio else ["--ws-control-port", str(control)]
    data = [] if data_dir is None else ["--data-dir", str(data_dir)]
    argv = [*command, "rt", *serve, "--ws-debug-port", str(debug), *data, *args]
    async with daemon_child(
        argv,
        control,
        name="lbp rt",
        stdio=stdio,
        error=StackError,
        log=log,
        stdout=stdout,
        env=env,
        cwd=cwd,
        grace=STOP_SEC,
        start_seconds=start_seconds,
    ) as process:
        yield RuntimeChild(process, control, debug, Path(cwd or ".") / (data_dir or "data"), stdio)
