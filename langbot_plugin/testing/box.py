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

from box_runtime.child import BoxUnavailableError, box_with_backend
from box_runtime.client import BoxClient
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
        output = subprocess.DEVNULL if log is None else log  # appended to
        try:
            async with box_with_backend(backend, session_id=session_id, stdio=True, log=output) as (
                client,
                chosen,
            ):
                yield cls(client, chosen, session_id)
        except BoxUnavailableError as exc:  # raised unwrapped: a test may skip on it
            raise HarnessError(str(exc)) from None

    async def exec(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """What LangBot's ``exec`` tool answers (:mod:`langbot_plugin.host.sandbox_tools`)."""
        answer = await run_exec(self.client, parameters, self.session_id)
        self.executed.append((dict(parameters), answer))
        return answer

    def tools(self) -> list[HostTool]:
        """The sandbox tools for ``PluginHarness(tools=...)``."""
        return [exec_tool(self.exec)]
