""":class:`BoxSandbox`: a real ``lbp box`` for the harness, and LangBot's ``exec`` tool on it.

LangBot gives runners its sandbox as host tools (``exec`` runs a shell command in the
conversation's Box). A runner calls them like any tool: ``api.call_tool("exec",
{"command": ...})``. :class:`BoxSandbox` starts ``lbp box`` as a child (spoken to over
its stdio, as LangBot starts it), picks a backend, and serves that tool to the
harness's host with the fields and the answer LangBot 4.11.2 uses::

    async with BoxSandbox.start("nsjail") as box, PluginHarness(path, box=box) as h:
        reply = await h.run_agent("compute 6 * 7")

The harness serves the runs' Box through the host library's
:class:`~langbot_plugin.host.box_service.RunBoxService` (:meth:`BoxSandbox.serve`):
every run is bound to the one session, and a run's ``exec`` carries that run's
artifact mounts (``api.artifacts.mount(...)``). The Box allows
:attr:`BoxSandbox.artifact_root` (a scratch directory of its own) as a mount source.
``PluginHarness(path, tools=box.tools())`` gives the bare tool (no run binding).
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import tempfile
from collections.abc import AsyncGenerator, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from box_runtime.child import BoxUnavailableError, box_with_backend
from box_runtime.client import BoxClient
from langbot_plugin.host.box_service import RunBoxService
from langbot_plugin.host.local_host import LocalHost
from langbot_plugin.host.sandbox_tools import EXEC_PARAMETERS, EXEC_TOOL, exec_tool, run_exec
from langbot_plugin.host.scripted import HostTool
from langbot_plugin.testing.errors import HarnessError

__all__ = ["EXEC_PARAMETERS", "BoxSandbox"]


class BoxSandbox:
    """A connected Box runtime; :meth:`tools` are the host tools it backs."""

    def __init__(
        self,
        client: BoxClient,
        backend: str,
        session_id: str,
        artifact_root: Path | None = None,
    ) -> None:
        self.client = client
        self.backend = backend
        self.session_id = session_id
        #: Where runs' mounted artifacts are laid out (a mount source the Box allows).
        self.artifact_root = artifact_root
        #: The ``exec`` calls made, with their answers.
        self.executed: list[tuple[dict[str, Any], dict[str, Any]]] = []

    @classmethod
    @asynccontextmanager
    async def start(
        cls,
        backend: str = "nsjail",
        *,
        session_id: str = "harness",
        log: Path | None = None,
        image: str | None = None,
    ) -> AsyncGenerator[BoxSandbox]:
        """Start ``lbp box -s``, initialise ``backend`` (``nsjail``, ``docker``, ``local``
        for the first that works; ``image`` is the sessions' image, else the Box's
        default); :class:`HarnessError` when it is not available here."""
        output = subprocess.DEVNULL if log is None else log  # appended to
        scratch = Path(tempfile.mkdtemp(prefix="lbp-harness-box-"))
        local: dict[str, Any] = {"allowed_mount_roots": [str(scratch)]}
        if image is not None:
            local["image"] = image
        ready = box_with_backend(
            backend, session_id=session_id, stdio=True, log=output, config={"local": local}
        )
        try:
            async with ready as (client, chosen):
                yield cls(client, chosen, session_id, scratch / "artifacts")
        except BoxUnavailableError as exc:  # raised unwrapped: a test may skip on it
            raise HarnessError(str(exc)) from None
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    async def exec(self, parameters: Mapping[str, Any]) -> dict[str, Any]:
        """What LangBot's ``exec`` tool answers (:mod:`langbot_plugin.host.sandbox_tools`)."""
        answer = await run_exec(self.client, parameters, self.session_id)
        self.executed.append((dict(parameters), answer))
        return answer

    async def exec_in_run(
        self, service: RunBoxService, run_id: str, parameters: Mapping[str, Any]
    ) -> dict[str, Any]:
        """A run's ``exec``: through the host's Box service, in the run's Box with the
        run's artifact mounts (and recorded in :attr:`executed`)."""
        answer = await service.call_tool(run_id, EXEC_TOOL, dict(parameters))
        self.executed.append((dict(parameters), answer))
        return answer

    def scope_id(self, **scope: Any) -> str:
        """Every conversation's Box is this sandbox's one session."""
        return self.session_id

    def serve(self, host: LocalHost) -> RunBoxService:
        """Serve ``host``'s runs' Box calls and ``exec`` tool from this Box; bind each
        run with ``service.bind_run(run_id, sandbox.session_id)``."""
        service = host.with_box(
            self.client, scope_id=self.scope_id, artifact_root=self.artifact_root
        )
        for tool in self.tools(service):
            host.add_tool(tool)
        return service

    def tools(self, service: RunBoxService | None = None) -> list[HostTool]:
        """The sandbox tools (for ``PluginHarness(tools=...)``, or :meth:`serve`'s with
        a host's Box ``service``: a run's calls then go through it)."""
        in_run = functools.partial(self.exec_in_run, service) if service is not None else None
        return [exec_tool(self.exec, in_run)]
