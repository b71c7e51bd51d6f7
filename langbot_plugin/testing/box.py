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
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio

from box_runtime.child import start_box
from box_runtime.client import BoxClient
from box_runtime.errors import BoxBackendUnavailableError
from langbot_plugin.host.sandbox_tools import EXEC_PARAMETERS, exec_tool, run_exec
from langbot_plugin.host.scripted import HostTool
from langbot_plugin.testing.errors import HarnessError

__all__ = ["EXEC_PARAMETERS", "BoxSandbox"]


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
        unavailable: str | None = None
        output = subprocess.DEVNULL if log is None else log  # appended to
        async with start_box(stdio=True, log=output) as child, child.client() as client:
            chosen, unavailable = await _choose(client, backend)
            if unavailable is None:
                sandbox = cls(client, chosen, session_id)
                try:
                    yield sandbox
                finally:
                    with anyio.CancelScope(shield=True), anyio.move_on_after(30):
                        await client.delete_session(session_id)
        # Raised here, outside the session's task group, so that a test catching
        # HarnessError (to skip where the backend cannot run) sees it unwrapped.
        if unavailable is not None:
            raise HarnessError(f"the Box backend {backend} is not available here: {unavailable}")

    async def exec(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """What LangBot's ``exec`` tool answers (:mod:`langbot_plugin.host.sandbox_tools`)."""
        answer = await run_exec(self.client, parameters, self.session_id)
        self.executed.append((dict(parameters), answer))
        return answer

    def tools(self) -> list[HostTool]:
        """The sandbox tools for ``PluginHarness(tools=...)``."""
        return [exec_tool(self.exec)]


async def _choose(client: BoxClient, backend: str) -> tuple[str, str | None]:
    """The backend the Box chose for ``backend`` (``local`` picks one), and why it cannot
    serve here (the Box's own probe), or ``None``."""
    try:
        await client.init({"backend": backend})
    except BoxBackendUnavailableError as exc:
        return backend, exc.message
    info = await client.backend_info()
    return info.name or backend, None if info.available else (info.reason or "no reason given")
