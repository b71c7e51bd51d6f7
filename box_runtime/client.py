"""The typed async client of the Box, for hosts and for our own tools, tests and benchmarks.

    async with BoxClient.connect("ws://127.0.0.1:5410/rpc/ws", instance_id="inst-1") as box:
        await box.init({"backend": "docker"})
        result = await box.exec(session_id="s1", cmd="echo hi")

Every call goes through :meth:`BoxClient.send` and waits as the action's declaration in
:mod:`box_runtime.protocol` says; errors come back as the runtime's own classes; only
the fields a caller set on a :class:`~box_runtime.models.BoxSpec` are sent. See
docs/box.md, *Client*.
"""

from __future__ import annotations

import hashlib
import urllib.parse
from collections.abc import AsyncGenerator, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any, Self, TypeVar

from pydantic import BaseModel

from box_runtime import protocol as p

# Importing the errors registers their wire codes, so calls re-raise the Box's classes.
from box_runtime.errors import BoxError, BoxExportRefusedError
from box_runtime.export import RECORDED_FIELDS, ExportedFile
from box_runtime.link_names import (
    CONTROL_TOKEN_HEADER,
    GENERATION_HEADER,
    INSTANCE_HEADER,
    WORKSPACE_HEADER,
)
from box_runtime.models import BoxExecutionResult, BoxSessionInfo, BoxSpec
from box_runtime.process_models import DEFAULT_PROCESS_ID, ManagedProcessInfo, ManagedProcessSpec
from langbot_plugin.protocol.spec import ActionSpec, Empty
from langbot_plugin.rpc import RPCSession
from langbot_plugin.rpc.transport_ws import connect_ws

__all__ = ["BoxClient", "BoxError", "accept_read", "relay_headers", "relay_url"]

#: Chunk size of imported files (the Box's own export chunk size).
_UPLOAD_CHUNK_BYTES = 512 * 1024
R = TypeVar("R")


class BoxClient:
    """Calls the Box actions over one RPC session.

    ``timeout``: ``None`` (the default) waits as each action declares; a number waits
    that long for every call.
    """

    def __init__(
        self,
        session: RPCSession,
        *,
        context: Mapping[str, Any] | None = None,
        timeout: float | None = None,
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
        timeout: float | None = None,
    ) -> AsyncGenerator[Self]:
        headers = relay_headers(token=token, instance_id=instance_id)
        async with connect_ws(url, headers=headers) as transport:
            session = RPCSession(transport, name="box-client")
            async with session.running():
                yield cls(session, context=context, timeout=timeout)

    def with_context(self, context: Mapping[str, Any] | None) -> BoxClient:
        """The same connection speaking for another tenant."""
        return BoxClient(self.session, context=context, timeout=self.timeout)

    # ------------------------------------------------------------------ the one call path

    async def send(
        self, spec: ActionSpec[Any, Any], payload: dict[str, Any], *, tenant: bool = True
    ) -> dict[str, Any]:
        """Call ``spec`` with ``payload`` as it is and return the Box's answer unparsed
        (``tenant``: the action carries the client's ``context``)."""
        context = self.context if tenant else None
        if self.timeout is None:
            return await spec.relay(self.session, payload, context=context)
        return await spec.relay(self.session, payload, context=context, timeout=self.timeout)

    async def _call(
        self,
        spec: ActionSpec[Any, R],
        params: BaseModel | Mapping[str, Any] | None = None,
        *,
        tenant: bool = True,
    ) -> R:
        return spec.parse_result(await self.send(spec, spec.dump_params(params), tenant=tenant))

    # ------------------------------------------------------------------ control

    async def init(self, config: Mapping[str, Any]) -> p.InitResult:
        return await self._call(p.BOX_INIT, dict(config), tenant=False)

    async def health(self) -> p.BackendInfo:
        return await self._call(p.BOX_HEALTH, Empty(), tenant=False)

    async def backend_info(self) -> p.BackendInfo:
        return await self._call(p.BOX_GET_BACKEND_INFO, Empty(), tenant=False)

    async def status(self) -> p.BoxStatus:
        return await self._call(p.BOX_STATUS, Empty())

    async def shutdown(self) -> None:
        await self._call(p.BOX_SHUTDOWN, Empty(), tenant=False)

    async def verify_shared_workspace(self, marker_name: str) -> p.SharedWorkspaceProof:
        probe = p.SharedWorkspaceProbe(marker_name=marker_name)
        return await self._call(p.BOX_VERIFY_SHARED_WORKSPACE, probe, tenant=False)

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
        return await self._call(p.BOX_EXEC, self._spec(spec, fields))

    async def create_session(
        self, spec: BoxSpec | Mapping[str, Any] | None = None, **fields: Any
    ) -> BoxSessionInfo:
        return await self._call(p.BOX_CREATE_SESSION, self._spec(spec, fields))

    async def get_session(self, session_id: str) -> BoxSessionInfo:
        return await self._call(p.BOX_GET_SESSION, p.SessionRef(session_id=session_id))

    async def list_sessions(self) -> list[BoxSessionInfo]:
        return (await self._call(p.BOX_GET_SESSIONS, Empty())).sessions

    async def delete_session(self, session_id: str) -> None:
        await self._call(p.BOX_DELETE_SESSION, p.SessionRef(session_id=session_id))

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
        request = p.ReadFilesRequest(session_id=session_id, paths=list(paths), run_id=run_id)
        result = await self._call(p.BOX_READ_FILES, request)
        return accept_read(list(paths), result, self.session.files.take)

    async def remove_files_if_match(
        self, session_id: str, files: Iterable[tuple[str, str]]
    ) -> p.RemoveFilesResult:
        """Delete exported files (``(path, sha256)``) whose content still matches."""
        digests = [p.FileDigest(path=path, sha256=digest) for path, digest in files]
        request = p.RemoveFilesRequest(session_id=session_id, files=digests)
        return await self._call(p.BOX_REMOVE_FILES_IF_MATCH, request)

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
        request = p.WriteFilesRequest(session_id=session_id, directory=directory, files=infos)
        result = await self._call(p.BOX_WRITE_FILES, request)
        return list(result.paths)

    async def storage_analysis(self) -> p.StorageAnalysis:
        return await self._call(p.BOX_GET_STORAGE_ANALYSIS, Empty())

    # ------------------------------------------------------------------ managed processes

    async def start_managed_process(
        self, session_id: str, spec: ManagedProcessSpec | Mapping[str, Any]
    ) -> ManagedProcessInfo:
        checked = ManagedProcessSpec.model_validate(spec)  # an instance is taken as it is
        start = p.ManagedProcessStart(session_id=session_id, spec=checked)
        return await self._call(p.BOX_START_MANAGED_PROCESS, start)

    async def get_managed_process(
        self, session_id: str, process_id: str = DEFAULT_PROCESS_ID
    ) -> ManagedProcessInfo:
        ref = p.ManagedProcessRef(session_id=session_id, process_id=process_id)
        return await self._call(p.BOX_GET_MANAGED_PROCESS, ref)

    async def stop_managed_process(
        self, session_id: str, process_id: str = DEFAULT_PROCESS_ID
    ) -> None:
        ref = p.ManagedProcessRef(session_id=session_id, process_id=process_id)
        await self._call(p.BOX_STOP_MANAGED_PROCESS, ref)

    async def audit(
        self, session_id: str | None = None, *, after_seq: int = 0, limit: int = 200
    ) -> p.AuditPage:
        """The audit of one session, or of this client's whole workspace (its context)."""
        query = p.AuditQuery(session_id=session_id, after_seq=after_seq, limit=limit)
        return await self._call(p.BOX_GET_AUDIT, query)


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
        headers[CONTROL_TOKEN_HEADER] = token
    if instance_id:
        headers[INSTANCE_HEADER] = instance_id
    if context:
        headers[WORKSPACE_HEADER] = str(context["workspace_uuid"])
        headers[GENERATION_HEADER] = str(context["placement_generation"])
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
        files.append(ExportedFile(data=data, **{f: getattr(info, f) for f in RECORDED_FIELDS}))
    if problem:
        raise BoxExportRefusedError(
            f"invalid export response: {problem}; the files were kept",
            details={"reason": "invalid_response", "sandbox_paths": paths, "files_retained": True},
        )
    return files
