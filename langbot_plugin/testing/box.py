""":class:`BoxSandbox`: a real ``lbp box`` for the harness, and LangBot's ``exec`` tool on it.

LangBot gives runners its sandbox as host tools (``exec`` runs a shell command in the
conversation's Box). A runner calls them like any tool: ``api.call_tool("exec",
{"command": ...})``. :class:`BoxSandbox` starts ``lbp box`` as a child (spoken to over
its stdio, as LangBot starts it), picks a backend, and serves that tool to the
harness's host with the fields and the answer LangBot 4.11.2 uses::

    async with BoxSandbox.start("nsjail") as box, PluginHarness(path, tools=box.tools()) as h:
        reply = await h.run_agent("compute 6 * 7")
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from box_runtime.client import BoxClient
from box_runtime.errors import BoxBackendUnavailableError
from langbot_plugin.host.scripted import HostTool
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.transport_stdio import stdio_transport
from langbot_plugin.testing.errors import HarnessError
from langbot_plugin.testing.links import free_port, stop_process

__all__ = ["EXEC_PARAMETERS", "BoxSandbox"]

#: The ``exec`` tool's parameters as LangBot describes them to models.
EXEC_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "command": {"type": "string", "description": "Shell command to execute."},
        "workdir": {"type": "string", "default": "/workspace"},
        "timeout_sec": {"type": "integer", "default": 30, "minimum": 1},
        "env": {"type": "object", "additionalProperties": {"type": "string"}, "default": {}},
        "description": {"type": "string"},
    },
    "required": ["command"],
    "additionalProperties": False,
}


class BoxSandbox:
    """A connected Box runtime; :meth:`tools` are the host tools it backs."""

    def __init__(self, client: BoxClient, backend: str, session_id: str) -> None:
        self.client = client
        self.backend = backend
        self.session_id = session_id
        #: The ``exec`` calls made, with their answers.
        self.executed: list[tuple[dict[str, Any], dict[str, Any]]] = []

    @classmethod
    @asynccontextmanager
    async def start(
        cls, backend: str = "nsjail", *, session_id: str = "harness", log: Path | None = None
    ) -> AsyncGenerator[BoxSandbox]:
        """Start ``lbp box -s``, initialise ``backend`` (``nsjail``, ``docker``, ``local``
        for the first that works); :class:`HarnessError` when it is not available here."""
        command = [sys.executable, "-m", "langbot_plugin.cli.__init__", "box", "-s"]
        command += ["--ws-control-port", str(free_port())]
        sink = log.open("wb") if log is not None else subprocess.DEVNULL
        try:
            process = await anyio.open_process(command, stderr=sink)
        finally:
            if log is not None and not isinstance(sink, int):
                sink.close()
        unavailable: str | None = None
        try:
            assert process.stdin is not None
            assert process.stdout is not None
            async with stdio_transport(process.stdout, process.stdin) as transport:
                session = RPCSession(transport, name="box-client", default_timeout=60.0)
                async with session.running():
                    client = BoxClient(session)
                    chosen, unavailable = await _choose(client, backend)
                    if unavailable is None:
                        sandbox = cls(client, chosen, session_id)
                        try:
                            yield sandbox
                        finally:
                            with anyio.CancelScope(shield=True), anyio.move_on_after(30):
                                await client.delete_session(session_id)
        finally:
            await stop_process(process)
        # Raised here, outside the session's task group, so that a test catching
        # HarnessError (to skip where the backend cannot run) sees it unwrapped.
        if unavailable is not None:
            raise HarnessError(f"the Box backend {backend} is not available here: {unavailable}")

    async def exec(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """What LangBot's ``exec`` tool answers: the command's status, exit code and output."""
        spec: dict[str, Any] = {"cmd": str(parameters["command"]), "session_id": self.session_id}
        for key in ("workdir", "timeout_sec", "env"):
            if key in parameters:
                spec[key] = parameters[key]
        result = await self.client.exec(spec)
        answer = {
            "session_id": result.session_id,
            "backend": result.backend_name,
            "status": result.status.value,
            "ok": result.ok,
            "exit_code": result.exit_code,
            "stdout": result.stdout,
            "stderr": result.stderr,
            "stdout_truncated": result.stdout_truncated,
            "stderr_truncated": result.stderr_truncated,
            "duration_ms": result.duration_ms,
        }
        self.executed.append((dict(parameters), answer))
        return answer

    def tools(self) -> list[HostTool]:
        """The sandbox tools for ``PluginHarness(tools=...)``."""
        return [
            HostTool(
                "exec",
                self.exec,
                description="Run shell commands in an isolated execution environment.",
                parameters=EXEC_PARAMETERS,
            )
        ]


async def _choose(client: BoxClient, backend: str) -> tuple[str, str | None]:
    """The backend the Box chose for ``backend`` (``local`` picks one), and why it cannot
    serve here (the Box's own probe), or ``None``."""
    try:
        await client.init({"backend": backend})
    except BoxBackendUnavailableError as exc:
        return backend, exc.message
    info = await client.backend_info()
    return info.name or backend, None if info.available else (info.reason or "no reason given")
