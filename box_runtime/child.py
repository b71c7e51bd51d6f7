"""``lbp box`` as a child process: the one starter of ``lbp dev --box``, ``lbp demo``,
the harness's ``BoxSandbox``, the benchmarks and the tests.

    async with start_box(config={"backend": "nsjail"}) as box, box.client() as client:
        await client.exec(session_id="s", cmd="echo hi")

The child is LangBot's command (``command`` replaces it) on ``--ws-control-port`` (a
free port unless given), serving on the port or, with ``stdio``, on its stdin and
stdout. Its log goes to ``log``: a file path (appended to; its tail is quoted when the
start fails), an open file, ``None`` (this process's streams) or ``DEVNULL``. Leaving
the block stops it in order (:func:`langbot_plugin.rpc.processes.stop_process`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncGenerator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
from anyio.abc import Process

from box_runtime.client import BoxClient
from box_runtime.errors import BoxBackendUnavailableError
from langbot_plugin.rpc import RPCError, RPCSession
from langbot_plugin.rpc.processes import Log, daemon_child, free_port
from langbot_plugin.rpc.transport_stdio import child_stdio_transport

__all__ = ["BOX_COMMAND", "BoxChild", "BoxStartError", "BoxUnavailableError"]
__all__ += ["box_with_backend", "start_box"]

#: ``lbp box`` as LangBot starts it.
BOX_COMMAND = (sys.executable, "-m", "langbot_plugin.cli.__init__", "box")
#: Seconds each stop step may take: a Box removes its sandboxes when terminated.
STOP_SEC = 30.0


class BoxStartError(RuntimeError):
    """The child did not start serving."""


class BoxUnavailableError(BoxStartError):
    """The child started, but no backend asked for works here."""


@dataclass(slots=True)
class BoxChild:
    """A running ``lbp box`` child."""

    process: Process
    port: int
    stdio: bool

    @property
    def url(self) -> str:
        """Its action RPC over WebSocket (not served in ``stdio`` mode)."""
        return f"ws://127.0.0.1:{self.port}/rpc/ws"

    @asynccontextmanager
    async def client(
        self,
        *,
        token: str | None = None,
        instance_id: str | None = None,
        context: Mapping[str, Any] | None = None,
    ) -> AsyncGenerator[BoxClient]:
        """A client of the child: over its stdio (once) or a WebSocket connection."""
        if not self.stdio:
            async with BoxClient.connect(
                self.url, token=token, instance_id=instance_id, context=context
            ) as client:
                yield client
            return
        async with child_stdio_transport(self.process) as transport:
            session = RPCSession(transport, name="box-client")
            async with session.running():
                yield BoxClient(session, context=context)


@asynccontextmanager
async def start_box(
    *args: str,
    stdio: bool = False,
    port: int | None = None,
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    command: Sequence[str] | None = None,
    cwd: str | Path | None = None,
    log: Log = subprocess.DEVNULL,
    start_seconds: float = 60.0,
) -> AsyncGenerator[BoxChild]:
    """Start ``lbp box`` (module docstring); ``args`` are more of its flags, ``env``
    is added to this process's environment."""
    chosen = free_port() if port is None else port
    environment = {**os.environ, **(env or {})}
    if config is not None:
        environment["LANGBOT_BOX_CONFIG"] = json.dumps(config)
    flags = ["-s"] if stdio else []
    argv = [*(command or BOX_COMMAND), *flags, "--ws-control-port", str(chosen), *args]
    async with daemon_child(
        argv,
        chosen,
        name="lbp box",
        stdio=stdio,
        error=BoxStartError,
        log=log,
        env=environment,
        cwd=cwd,
        grace=STOP_SEC,
        start_seconds=start_seconds,
    ) as process:
        yield BoxChild(process, chosen, stdio)


@asynccontextmanager
async def box_with_backend(
    backend: str,
    *fallbacks: str,
    session_id: str,
    stdio: bool = False,
    cwd: str | Path | None = None,
    log: Log = subprocess.DEVNULL,
    start_seconds: float = 60.0,
    config: Mapping[str, Any] | None = None,
) -> AsyncGenerator[tuple[BoxClient, str]]:
    """:func:`start_box` and its client, with the first of ``backend`` and ``fallbacks``
    that works here (the Box's own probe) selected and named (``config``, more of the
    Box's settings, goes with it: ``{"local": {"allowed_mount_roots": [...]}}``); leaving
    the block deletes the caller's session ``session_id``. :class:`BoxUnavailableError`
    (the last one's reason) when none works, raised outside the child's task groups: it
    arrives unwrapped."""
    unavailable = ""
    async with (
        start_box(stdio=stdio, cwd=cwd, log=log, start_seconds=start_seconds) as child,
        child.client() as client,
    ):
        for name in (backend, *fallbacks):
            try:
                await client.init({**(config or {}), "backend": name})
                info = await client.backend_info()
            except BoxBackendUnavailableError as exc:  # refused at once
                unavailable = f"the Box's {name} backend does not work here: {exc.message}"
                continue
            if not info.available:
                unavailable = f"the Box's {name} backend does not work here: {info.reason}"
                continue
            try:
                yield client, info.name or name
            finally:
                with anyio.CancelScope(shield=True), anyio.move_on_after(STOP_SEC):
                    try:
                        await client.delete_session(session_id)
                    except RPCError:  # never created (no tool ran), or gone already
                        pass
            return
    raise BoxUnavailableError(unavailable)
