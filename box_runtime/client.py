"""A typed async client of the Box, for hosts and for our own tests and benchmarks.

    async with BoxClient.connect("ws://127.0.0.1:5410/rpc/ws", instance_id="inst-1") as box:
        await box.init({"backend": "docker"})
        result = await box.exec(session_id="s1", cmd="echo hi")

Errors come back as the runtime's own classes (``BoxSessionNotFoundError``, ...),
re-created from the wire code by the RPC core. Only the fields a caller set on a
:class:`~box_runtime.models.BoxSpec` are sent, so the runtime's profile supplies the
rest. ``context`` (tenancy) is attached to every tenant action when given.
"""

from __future__ import annotations

import hashlib
import urllib.parse
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self

from box_runtime import protocol as p

# Importing the errors registers their wire codes, so calls re-raise the Box's classes.
from box_runtime.errors import BoxError, BoxExportRefusedError
from box_runtime.export import ExportedFile
from box_runtime.models import BoxExecutionResult, BoxSessionInfo, BoxSpec
from box_runtime.process_models import DEFAULT_PROCESS_ID, ManagedProcessInfo, ManagedProcessSpec
from langbot_plugin.protocol.spec import Empty
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.transport_ws import connect_ws

__all__ = ["BoxClient", "BoxError", "accept_read", "relay_headers", "relay_url"]

#: Extra seconds an exec call waits beyond the command's own timeout.
EXEC_MARGIN_SEC = 30.0
#: Chunk size of imported files (the Box's own export chunk size).
_UPLOAD_CHUNK_BYTES = 512 * 1024


class BoxClient:
    """Calls the Box actions over one RPC session."""

    def __init__(
        self,
        session: RPCSession,
        *,
        context: Mapping[str, Any] | None = None,
        timeout: float = 60.0,
    ) -> None:
        self.session = session
        self.context = dict(context) if context is not None else None
        self.timeout = timeout

    @classmethod
    @asynccontextmanager
    async def connect(
        cls,
        url: str,
        *,
        token: str | None = None,
        instance_id: str | None = None,
        context: Mapping[str, Any] | None = None,
        timeout: float = 60.0,
    ) -> AsyncGenerator[Self]:
        headers: dict[str, str] = {}
        if token:
            headers["X-LangBot-Box-Control-Token"] = token
        if instance_id:
            headers["X-LangBot-Instance-Id"] = instance_id
        async with connect_ws(url, headers=headers) as transport:
            session = RPCSession(transport, name="box-client", default_timeout=timeout)
            async with session.running():
                yield cls(session, context=context, timeout=timeout)

    def with_context(self, context: Mapping[str, Any] | None) -> BoxClient:
        """The same connection speaking for another tenant."""
        return BoxClient(self.session, context=context, timeout=self.timeout)

    # ------------------------------------------------------------------ control

    async def init(self, config: Mapping[str, Any]) -> p.InitResult:
        return await p.BOX_INIT.call(self.session, dict(config), timeout=self.timeout)

    async def health(self) -> p.BackendInfo:
        return await p.BOX_HEALTH.call(self.session, Empty(), timeout=self.timeout)

    async def backend_info(self) -> p.BackendInfo:
        return await p.BOX_GET_BACKEND_INFO.call(self.session, Empty(), timeout=self.timeout)

    async def status(self) -> p.BoxStatus:
        return await p.BOX_STATUS.call(
            self.session, Empty(), context=self.context, timeout=self.timeout
        )

    async def shutdown(self) -> None:
        await p.BOX_SHUTDOWN.call(self.session, Empty(), timeout=self.timeout)

    async def verify_shared_workspace(self, marker_name: str) -> p.SharedWorkspaceProof:
        return await p.BOX_VERIFY_SHARED_WORKSPACE.call(
            self.session, p.SharedWorkspaceProbe(marker_name=marker_name), timeout=self.timeout
        )

    # ------------------------------------------------------------------ sessions

    @staticmethod
    def _spec(spec: BoxSpec | Mapping[str, Any] | None, fields: dict[str, Any]) -> dict[str, Any]:
        if spec is None:
            spec = BoxSpec.model_validate(fields)
        elif not isinstance(spec, BoxSpec):
            spec = BoxSpec.model_validate({**spec, **fields})
        elif fields:
            spec = BoxSpec.model_validate({**spec.model_dump(exclude_unset=True), **fields})
        return spec.model_dump(mode="json", exclude_unset=True)

    async def exec(
        self, spec: BoxSpec | Mapping[str, Any] | None = None, **fields: Any
    ) -> BoxExecutionResult:
        payload = self._spec(spec, fields)
        wait = float(payload.get("timeout_sec", 300)) + EXEC_MARGIN_SEC
        return await p.BOX_EXEC.call(self.session, payload, context=self.context, timeout=wait)

    async def create_session(
        self, spec: BoxSpec | Mapping[str, Any] | None = None, **fields: Any
    ) -> BoxSessionInfo:
        return await p.BOX_CREATE_SESSION.call(
            self.session, self._spec(spec, fields), context=self.context, timeout=self.timeout
        )

    async def get_session(self, session_id: str) -> BoxSessionInfo:
        return await p.BOX_GET_SESSION.call(
            self.session,
            p.SessionRef(session_id=session_id),
            context=self.context,
            timeout=self.timeout,
        )

    async def list_sessions(self) -> list[BoxSessionInfo]:
        result = await p.BOX_GET_SESSIONS.call(
            self.session, Empty(), context=self.context, timeout=self.timeout
        )
        return result.sessions

    async def delete_session(self, session_id: str) -> None:
        await p.BOX_DELETE_SESSION.call(
            self.session,
            p.SessionRef(session_id=session_id),
            context=self.context,
            timeout=self.timeout,
        )

    # ------------------------------------------------------------------ explicit export

    async def read_files(
        self, session_id: str, paths: Sequence[str], *, run_id: str | None = None
    ) -> list[ExportedFile]:
        """Read selected files of an existing session (seed 004), all or none.

        Returns the files in the order asked, with their bytes, digest, size, mode and
        owner. Raises :class:`~box_runtime.errors.BoxQuotaExceededError` (a limit; its
        ``details`` carry ``limit``, ``actual``, ``sandbox_paths``, ``files_retained``)
        or :class:`~box_runtime.errors.BoxExportRefusedError` (a file that cannot be
        exported, or an answer that does not match the request: ``invalid_response``).
        ``run_id`` makes the Box count the batch against that run's cumulative limits.
        """
        result = await p.BOX_READ_FILES.call(
            self.session,
            p.ReadFilesRequest(session_id=session_id, paths=list(paths), run_id=run_id),
            context=self.context,
            timeout=self.timeout,
        )
        return accept_read(list(paths), result, self.session.files.take)

    async def remove_files_if_match(
        self, session_id: str, files: Iterable[tuple[str, str]]
    ) -> p.RemoveFilesResult:
        """Delete exported files (``(path, sha256)``) whose content still matches."""
        return await p.BOX_REMOVE_FILES_IF_MATCH.call(
            self.session,
            p.RemoveFilesRequest(
                session_id=session_id,
                files=[p.FileDigest(path=path, sha256=digest) for path, digest in files],
            ),
            context=self.context,
            timeout=self.timeout,
        )

    async def write_files(
        self, session_id: str, directory: str, files: Sequence[tuple[str, bytes]]
    ) -> list[str]:
        """Import ``files`` (name, bytes) into ``directory`` (below ``/workspace/inbox``)
        of an existing session, as its sandbox user; returns their sandbox paths. A name
        already there, a link on the way or a limit (20 files, 50 MiB a call, 10 MiB a
        file) refuses the import."""
        infos: list[p.WriteFileInfo] = []
        for name, data in files:
            key = await self.session.send_file(
                data, context=self.context, chunk_bytes=_UPLOAD_CHUNK_BYTES
            )
            infos.append(p.WriteFileInfo(name=name, size=len(data), file_key=key))
        result = await p.BOX_WRITE_FILES.call(
            self.session,
            p.WriteFilesRequest(session_id=session_id, directory=directory, files=infos),
            context=self.context,
            timeout=self.timeout,
        )
        return list(result.paths)

    async def storage_analysis(self) -> p.StorageAnalysis:
        return await p.BOX_GET_STORAGE_ANALYSIS.call(
            self.session, Empty(), context=self.context, timeout=self.timeout
        )

    # ------------------------------------------------------------------ managed processes

    async def start_managed_process(
        self, session_id: str, spec: ManagedProcessSpec | Mapping[str, Any]
    ) -> ManagedProcessInfo:
        checked = (
            spec
            if isinstance(spec, ManagedProcessSpec)
            else ManagedProcessSpec.model_validate(spec)
        )
        return await p.BOX_START_MANAGED_PROCESS.call(
            self.session,
            p.ManagedProcessStart(session_id=session_id, spec=checked),
            context=self.context,
            timeout=self.timeout,
        )

    async def get_managed_process(
        self, session_id: str, process_id: str = DEFAULT_PROCESS_ID
    ) -> ManagedProcessInfo:
        return await p.BOX_GET_MANAGED_PROCESS.call(
            self.session,
            p.ManagedProcessRef(session_id=session_id, process_id=process_id),
            context=self.context,
            timeout=self.timeout,
        )

    async def stop_managed_process(
        self, session_id: str, process_id: str = DEFAULT_PROCESS_ID
    ) -> None:
        await p.BOX_STOP_MANAGED_PROCESS.call(
            self.session,
            p.ManagedProcessRef(session_id=session_id, process_id=process_id),
            context=self.context,
            timeout=self.timeout,
        )


def relay_url(base_url: str, session_id: str, process_id: str = DEFAULT_PROCESS_ID) -> str:
    """The relay address of a managed process (``base_url``: ``ws://host:port``).

    Send the control token and instance id as on ``/rpc/ws``, and, for a tenant's
    session, ``X-LangBot-Workspace-Id`` and ``X-LangBot-Placement-Generation``
    (:func:`relay_headers`).
    """
    quoted_session = urllib.parse.quote(session_id, safe="")
    quoted_process = urllib.parse.quote(process_id, safe="")
    return (
        f"{base_url.rstrip('/')}/v1/sessions/{quoted_session}/managed-process/{quoted_process}/ws"
    )


def relay_headers(
    *,
    token: str | None = None,
    instance_id: str | None = None,
    context: Mapping[str, Any] | None = None,
) -> dict[str, str]:
    """The handshake headers of a relay connection."""
    headers: dict[str, str] = {}
    if token:
        headers["X-LangBot-Box-Control-Token"] = token
    if instance_id:
        headers["X-LangBot-Instance-Id"] = instance_id
    if context:
        headers["X-LangBot-Workspace-Id"] = str(context["workspace_uuid"])
        headers["X-LangBot-Placement-Generation"] = str(context["placement_generation"])
    return headers


def accept_read(
    paths: list[str], result: p.ReadFilesResult, take: Callable[[str], bytes]
) -> list[ExportedFile]:
    """The files of a ``box_read_files`` answer, checked against the request.

    An answer that names other files, misses one, or whose bytes do not match the
    size and digest it states is refused whole (``invalid_response``): it is never
    mistaken for a size problem.
    """
    by_path = {info.path: info for info in result.files}
    problem = ""
    if len(result.files) != len(paths) or set(by_path) != set(paths):
        problem = "it names other files than were selected"
    files: list[ExportedFile] = []
    for path in paths if not problem else ():
        info = by_path[path]
        try:
            data = take(info.file_key)
        except Exception:
            problem = f"the bytes of {path} did not arrive"
            break
        if len(data) != info.size or hashlib.sha256(data).hexdigest() != info.sha256:
            problem = f"the bytes of {path} do not match their size and digest"
            break
        files.append(
            ExportedFile(
                path=path,
                data=data,
                sha256=info.sha256,
                size=info.size,
                mode=info.mode,
                uid=info.uid,
                gid=info.gid,
                mtime_ns=info.mtime_ns,
            )
        )
    if problem:
        raise BoxExportRefusedError(
            f"invalid export response: {problem}; the files were kept",
            details={"reason": "invalid_response", "sandbox_paths": paths, "files_retained": True},
        )
    return files
